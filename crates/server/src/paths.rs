//! Path-free text for the views: server paths in free-form messages (profile warnings, probe errors,
//! environment checks) replaced by placeholders, so a client never learns the server's layout. Known
//! paths get a named placeholder (`<profile dir>`); any other absolute path (`/…` or `~/…` starting a
//! word, a quoted string or a parenthesis) becomes `<path>`, up to the next blank or closing quote or
//! bracket, a trailing `:`, `.` or `,` staying with the sentence. URLs are left alone (their `/` follows
//! a `:` or another `/`).

use std::path::Path;

/// The generic placeholder of an absolute path.
pub const PATH: &str = "<path>";

/// `text` with each of `known` (placeholder, path) replaced by its placeholder (longest path first, so
/// a path never loses only its prefix), then every other absolute path by [`PATH`].
pub fn path_free(text: &str, known: &[(&str, &Path)]) -> String {
    let mut known: Vec<(&str, String)> = known
        .iter()
        .map(|(label, p)| (*label, p.to_string_lossy().into_owned()))
        .filter(|(_, p)| p.len() > 1)
        .collect();
    known.sort_by_key(|(_, p)| std::cmp::Reverse(p.len()));
    let mut out = text.to_owned();
    for (label, p) in &known {
        out = out.replace(p.as_str(), label);
    }
    absolute_paths_replaced(&out)
}

/// A character after which a `/` (or `~/`) starts a path.
fn opens(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '(' | '[' | '{' | '=')
}

/// A character that ends a path.
fn closes(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ')' | ']' | '}' | ',' | ';')
}

fn absolute_paths_replaced(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let at_word = i == 0 || opens(chars[i - 1]);
        let starts = match chars[i] {
            '/' => true,
            '~' => chars.get(i + 1) == Some(&'/'),
            _ => false,
        };
        if !(at_word && starts) {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let mut end = i;
        while end < chars.len() && !closes(chars[end]) {
            end += 1;
        }
        // Sentence punctuation after the path is not part of it.
        while end > i + 1 && matches!(chars[end - 1], ':' | '.') {
            end -= 1;
        }
        out.push_str(PATH);
        i = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_paths_get_their_label_and_the_rest_the_generic_one() {
        let dir = Path::new("/srv/agents/claude profile");
        let known = [("<profile dir>", dir)];
        let cases = [
            (
                "/srv/agents/claude profile is the native profile: the SDK never writes into it",
                "<profile dir> is the native profile: the SDK never writes into it",
            ),
            (
                "no credentials to link at /home/op/.claude/.credentials.json",
                "no credentials to link at <path>",
            ),
            (
                "no MCP servers to copy in ~/.claude.json.",
                "no MCP servers to copy in <path>.",
            ),
            (
                "profile /var/lib/x/config.toml: Permission denied (os error 13)",
                "profile <path>: Permission denied (os error 13)",
            ),
            (
                "skill \"k\": source missing: directory \"/tmp/a/b\"",
                "skill \"k\": source missing: directory \"<path>\"",
            ),
            ("cannot spawn (/usr/bin/claude)", "cannot spawn (<path>)"),
            (
                "nothing to copy at /srv/agents/claude profile/settings.json",
                "nothing to copy at <profile dir>/settings.json",
            ),
            // Not paths: URLs, fractions, relative names.
            (
                "http://127.0.0.1:9/mcp and 1/2 of skills/notes",
                "http://127.0.0.1:9/mcp and 1/2 of skills/notes",
            ),
            ("/", "<path>"),
            ("", ""),
        ];
        for (text, want) in cases {
            assert_eq!(path_free(text, &known), want, "{text:?}");
        }
    }

    #[test]
    fn the_longest_known_path_wins() {
        let known = [
            ("<source>", Path::new("/a/b")),
            ("<dir>", Path::new("/a/b/clone")),
        ];
        assert_eq!(path_free("/a/b/clone from /a/b", &known), "<dir> from <source>");
    }
}
