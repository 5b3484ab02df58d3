# Old single-crate source paths → their place in the workspace (issue #23 item 3).
# Apply with: sed -E -i -f docs/workspace-paths.sed FILE...   (a path already under crates/ is left alone:
# every rule needs `src/` at a word start that is not preceded by `/`).
s#(^|[^/[:alnum:]_.-])src/acp/(wire|rpc)\.rs#\1crates/core/src/acp/\2.rs#g
s#(^|[^/[:alnum:]_.-])src/acp/mod\.rs#\1crates/server/src/acp/mod.rs#g
s#(^|[^/[:alnum:]_.-])src/acp([/`:) ,]|$)#\1crates/server/src/acp\2#g
s#(^|[^/[:alnum:]_.-])src/providers/registry\.rs#\1crates/server/src/providers/registry.rs#g
s#(^|[^/[:alnum:]_.-])src/providers/mod\.rs#\1crates/providers/src/lib.rs#g
s#(^|[^/[:alnum:]_.-])src/providers([/`:) ,]|$)#\1crates/providers/src\2#g
s#(^|[^/[:alnum:]_.-])src/store/mod\.rs#\1crates/store/src/lib.rs#g
s#(^|[^/[:alnum:]_.-])src/store([/`:) ,]|$)#\1crates/store/src\2#g
s#(^|[^/[:alnum:]_.-])src/testkit/mod\.rs#\1crates/testkit/src/lib.rs#g
s#(^|[^/[:alnum:]_.-])src/testkit([/`:) ,]|$)#\1crates/testkit/src\2#g
s#(^|[^/[:alnum:]_.-])src/server/mod\.rs#\1crates/server/src/lib.rs#g
s#(^|[^/[:alnum:]_.-])src/server([/`:) ,]|$)#\1crates/server/src\2#g
s#(^|[^/[:alnum:]_.-])src/(agui|driver|profile|recorder|runtime|skills|tools|vocab|workspace)([/`:) ,]|$)#\1crates/core/src/\2\3#g
