"""The machine's ceiling: the catalog entry where nginx answers `Pong!` itself, which a study runs
beside the servers, `show` and the report put first, and --servers keeps."""

BASELINE = "nginx-baseline"
