//! The content-block state of a stream-json translator, wire-neutral.
//!
//! With `--include-partial-messages` every model block arrives twice: first as `stream_event` deltas
//! (`content_block_start` / `_delta` / `_stop`), then as one complete `assistant` block. [`Blocks`]
//! renders the deltas as start/content/end lifecycles and remembers what it streamed; a complete block
//! then emits nothing unless no deltas were seen for it (synthesized messages, a run without partial
//! messages), in which case the whole block is emitted as one lifecycle. It also keeps the turn's text
//! and the tool names by call id. Transcript items stay with the provider.

use std::collections::HashMap;

use serde_json::Value;

use crate::driver::{DriverEvent, Phase, ToolCall};

use super::events::{text_event, thinking_event};

/// How a complete block matches a block still streaming (an interrupt cut its stream before
/// `content_block_stop`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CutRule {
    /// The streamed text equals the complete one.
    #[default]
    Exact,
    /// The streamed text is a prefix of the complete one (the cut stream is forgotten and the complete
    /// block counts as streamed).
    Prefix,
}

/// A block `content_block_start` opened.
#[derive(Debug, Clone, Copy)]
pub enum Start<'a> {
    /// A text block.
    Text,
    /// A thinking block.
    Thinking,
    /// A tool call.
    Tool {
        /// Its id.
        id: &'a str,
        /// The tool.
        name: &'a str,
    },
}

/// One `content_block_delta`.
#[derive(Debug, Clone, Copy)]
pub enum Delta<'a> {
    /// `text_delta`.
    Text(&'a str),
    /// `thinking_delta`.
    Thinking(&'a str),
    /// `input_json_delta`.
    InputJson(&'a str),
}

/// A block being streamed, by its index in the current model message.
#[derive(Debug)]
enum Open {
    Text { id: String, text: String },
    Thinking { id: String, text: String },
    Tool { id: String, args: String },
}

/// A block that finished streaming and still waits for its complete `assistant` frame.
#[derive(Debug, PartialEq)]
enum Streamed {
    Text(String),
    Thinking(String),
    Tool(String),
}

/// Content-block state across one invocation's frames.
#[derive(Debug, Default)]
pub struct Blocks {
    rule: CutRule,
    message_id: String,
    seq: u64,
    open: HashMap<u32, Open>,
    streamed: Vec<Streamed>,
    turn_text: String,
    tools: HashMap<String, String>,
}

impl Blocks {
    /// Fresh state matching cut streams by `rule`.
    pub fn new(rule: CutRule) -> Blocks {
        Blocks {
            rule,
            ..Default::default()
        }
    }

    /// The assistant text of the turn in progress.
    pub fn turn_text(&self) -> &str {
        &self.turn_text
    }

    /// The tool of call `id`, once seen.
    pub fn tool_name(&self, id: &str) -> Option<&str> {
        self.tools.get(id).map(String::as_str)
    }

    /// Whether call `id` was seen.
    pub fn knows_tool(&self, id: &str) -> bool {
        self.tools.contains_key(id)
    }

    /// The id of the current model message (from `message_start`).
    pub fn message_id(&self) -> &str {
        &self.message_id
    }

    /// `message_start`: block ids of this message derive from `id`.
    pub fn message_start(&mut self, id: &str) {
        id.clone_into(&mut self.message_id);
    }

    fn next_id(&mut self, base: &str) -> String {
        self.seq += 1;
        let base = if base.is_empty() { "msg" } else { base };
        format!("{base}-{}", self.seq)
    }

    /// `content_block_start` at `index`.
    pub fn start(&mut self, index: u32, block: Start<'_>, out: &mut Vec<DriverEvent>) {
        let base = self.message_id.clone();
        let open = match block {
            Start::Text => {
                let id = self.next_id(&base);
                out.push(text_event(&id, String::new(), Phase::Start));
                Open::Text {
                    id,
                    text: String::new(),
                }
            }
            Start::Thinking => {
                let id = self.next_id(&base);
                out.push(thinking_event(&id, String::new(), Phase::Start));
                Open::Thinking {
                    id,
                    text: String::new(),
                }
            }
            Start::Tool { id, name } => {
                out.push(DriverEvent::ToolCall(ToolCall {
                    id: id.to_owned(),
                    name: name.to_owned(),
                    phase: Phase::Start,
                    ..Default::default()
                }));
                self.tools.insert(id.to_owned(), name.to_owned());
                Open::Tool {
                    id: id.to_owned(),
                    args: String::new(),
                }
            }
        };
        // A block index reused without a stop: close the old one first.
        if let Some(old) = self.open.insert(index, open) {
            self.close(old, out);
        }
    }

    /// `content_block_delta` at `index` (ignored when nothing of that kind is open there).
    pub fn delta(&mut self, index: u32, delta: Delta<'_>, out: &mut Vec<DriverEvent>) {
        let Some(open) = self.open.get_mut(&index) else {
            return;
        };
        match (open, delta) {
            (Open::Text { id, text }, Delta::Text(s)) if !s.is_empty() => {
                text.push_str(s);
                self.turn_text.push_str(s);
                out.push(text_event(id, s.to_owned(), Phase::Content));
            }
            (Open::Thinking { id, text }, Delta::Thinking(s)) if !s.is_empty() => {
                text.push_str(s);
                out.push(thinking_event(id, s.to_owned(), Phase::Content));
            }
            (Open::Tool { id, args }, Delta::InputJson(s)) if !s.is_empty() => {
                args.push_str(s);
                out.push(DriverEvent::ToolCall(ToolCall {
                    id: id.clone(),
                    args_delta: s.to_owned(),
                    ..Default::default()
                }));
            }
            _ => {}
        }
    }

    /// `content_block_stop` at `index`.
    pub fn stop(&mut self, index: u32, out: &mut Vec<DriverEvent>) {
        if let Some(open) = self.open.remove(&index) {
            self.close(open, out);
        }
    }

    fn close(&mut self, open: Open, out: &mut Vec<DriverEvent>) {
        match open {
            Open::Text { id, text } => {
                out.push(text_event(&id, String::new(), Phase::End));
                self.streamed.push(Streamed::Text(text));
            }
            Open::Thinking { id, text } => {
                out.push(thinking_event(&id, String::new(), Phase::End));
                self.streamed.push(Streamed::Thinking(text));
            }
            Open::Tool { id, args } => {
                let args = serde_json::from_str::<Value>(&args)
                    .ok()
                    .and_then(|v| v.as_object().cloned());
                out.push(DriverEvent::ToolCall(ToolCall {
                    id: id.clone(),
                    args,
                    phase: Phase::End,
                    ..Default::default()
                }));
                self.streamed.push(Streamed::Tool(id));
            }
        }
    }

    /// True (and forgotten) when `s` was already streamed. A block still open that matches `s` under the
    /// [`CutRule`] is closed first.
    fn was_streamed(&mut self, s: &Streamed, out: &mut Vec<DriverEvent>) -> bool {
        let rule = self.rule;
        let matches = |open: &str, complete: &str| match rule {
            CutRule::Exact => open == complete,
            CutRule::Prefix => complete.starts_with(open),
        };
        let index = self.open.iter().find_map(|(i, o)| {
            let same = match (o, s) {
                (Open::Text { text, .. }, Streamed::Text(t)) => matches(text, t),
                (Open::Thinking { text, .. }, Streamed::Thinking(t)) => matches(text, t),
                (Open::Tool { id, .. }, Streamed::Tool(t)) => id == t,
                _ => false,
            };
            same.then_some(*i)
        });
        if let Some(open) = index.and_then(|i| self.open.remove(&i)) {
            let prefix = match (&open, rule) {
                (Open::Text { text, .. } | Open::Thinking { text, .. }, CutRule::Prefix) => {
                    Some(text.clone())
                }
                _ => None,
            };
            self.close(open, out);
            if let Some(p) = prefix {
                // Forget the cut stream; the complete frame counts as streamed.
                if let Some(i) = self
                    .streamed
                    .iter()
                    .rposition(|x| matches!(x, Streamed::Text(t) | Streamed::Thinking(t) if *t == p))
                {
                    self.streamed.remove(i);
                }
                return true;
            }
        }
        match self.streamed.iter().position(|x| x == s) {
            Some(i) => {
                self.streamed.remove(i);
                true
            }
            None => false,
        }
    }

    /// A complete text block: its lifecycle unless it was streamed (then only the turn text grows by
    /// what was streamed already).
    pub fn complete_text(&mut self, text: &str, out: &mut Vec<DriverEvent>) {
        if !self.was_streamed(&Streamed::Text(text.to_owned()), out) && !text.is_empty() {
            let id = self.next_id("text");
            out.push(text_event(&id, String::new(), Phase::Start));
            out.push(text_event(&id, text.to_owned(), Phase::Content));
            out.push(text_event(&id, String::new(), Phase::End));
            self.turn_text.push_str(text);
        }
    }

    /// A complete thinking block: its lifecycle unless it was streamed.
    pub fn complete_thinking(&mut self, thinking: &str, out: &mut Vec<DriverEvent>) {
        if !self.was_streamed(&Streamed::Thinking(thinking.to_owned()), out) && !thinking.is_empty() {
            let id = self.next_id("thinking");
            out.push(thinking_event(&id, String::new(), Phase::Start));
            out.push(thinking_event(&id, thinking.to_owned(), Phase::Content));
            out.push(thinking_event(&id, String::new(), Phase::End));
        }
    }

    /// A complete tool call: start and end (with its arguments) unless it was streamed; its name is
    /// remembered either way.
    pub fn complete_tool(&mut self, id: &str, name: &str, input: &Value, out: &mut Vec<DriverEvent>) {
        if !self.was_streamed(&Streamed::Tool(id.to_owned()), out) {
            out.push(DriverEvent::ToolCall(ToolCall {
                id: id.to_owned(),
                name: name.to_owned(),
                phase: Phase::Start,
                ..Default::default()
            }));
            out.push(DriverEvent::ToolCall(ToolCall {
                id: id.to_owned(),
                args: input.as_object().cloned(),
                phase: Phase::End,
                ..Default::default()
            }));
        }
        self.tools.insert(id.to_owned(), name.to_owned());
    }

    /// Closes every block still streaming (in index order), so no lifecycle dangles.
    pub fn close_open(&mut self, out: &mut Vec<DriverEvent>) {
        let mut open: Vec<(u32, Open)> = self.open.drain().collect();
        open.sort_by_key(|(i, _)| *i);
        for (_, o) in open {
            self.close(o, out);
        }
    }

    /// Ends the turn: forgets what was streamed and returns the turn's text.
    pub fn end_turn(&mut self) -> String {
        self.streamed.clear();
        std::mem::take(&mut self.turn_text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(out: &[DriverEvent]) -> Vec<(Phase, String)> {
        out.iter()
            .filter_map(|e| match e {
                DriverEvent::TextDelta(t) => Some((t.phase, t.text.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_cut_stream_counts_as_streamed_only_under_the_prefix_rule() {
        for (rule, replayed) in [(CutRule::Prefix, false), (CutRule::Exact, true)] {
            let mut b = Blocks::new(rule);
            let mut out = Vec::new();
            b.message_start("m");
            b.start(0, Start::Text, &mut out);
            b.delta(0, Delta::Text("Hel"), &mut out);
            out.clear();
            b.complete_text("Hello", &mut out);
            let t = texts(&out);
            // Either way the open block is closed (Prefix) or stays open until the turn ends (Exact).
            assert_eq!(
                t.iter().any(|(p, s)| *p == Phase::Content && s == "Hello"),
                replayed,
                "{rule:?}"
            );
            b.close_open(&mut out);
            assert_eq!(
                texts(&out).iter().filter(|(p, _)| *p == Phase::End).count(),
                if replayed { 2 } else { 1 },
                "{rule:?}"
            );
        }
    }

    #[test]
    fn streamed_blocks_are_not_repeated_and_turn_text_is_taken_once() {
        let mut b = Blocks::new(CutRule::Exact);
        let mut out = Vec::new();
        b.start(0, Start::Text, &mut out);
        b.delta(0, Delta::Text("Hi"), &mut out);
        b.delta(0, Delta::InputJson("{}"), &mut out);
        b.stop(0, &mut out);
        assert_eq!(out.len(), 3);
        b.complete_text("Hi", &mut out);
        assert_eq!(out.len(), 3);
        b.start(
            1,
            Start::Tool {
                id: "t1",
                name: "Bash",
            },
            &mut out,
        );
        b.delta(1, Delta::InputJson(r#"{"command":"ls"}"#), &mut out);
        b.stop(1, &mut out);
        let DriverEvent::ToolCall(end) = out.last().unwrap() else {
            panic!("the stop closes the tool call");
        };
        assert_eq!(end.args.as_ref().unwrap()["command"], "ls");
        assert_eq!(b.tool_name("t1"), Some("Bash"));
        assert_eq!(b.end_turn(), "Hi");
        assert_eq!(b.turn_text(), "");
    }
}
