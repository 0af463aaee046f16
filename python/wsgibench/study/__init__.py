"""What a study is: the Study, Load, RequestKind and App models, TOML parsing, cell planning, built-ins."""
