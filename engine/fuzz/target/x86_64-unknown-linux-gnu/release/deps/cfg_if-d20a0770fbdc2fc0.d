/work/main/engine/fuzz/target/x86_64-unknown-linux-gnu/release/deps/cfg_if-d20a0770fbdc2fc0.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/cfg-if-1.0.5/src/lib.rs

/work/main/engine/fuzz/target/x86_64-unknown-linux-gnu/release/deps/libcfg_if-d20a0770fbdc2fc0.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/cfg-if-1.0.5/src/lib.rs

/work/main/engine/fuzz/target/x86_64-unknown-linux-gnu/release/deps/libcfg_if-d20a0770fbdc2fc0.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/cfg-if-1.0.5/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/cfg-if-1.0.5/src/lib.rs:
