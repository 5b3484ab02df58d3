//! The `stream` scenario: a long, paced stream of stamped assistant frames, for the service load generator
//! (`src/bin/loadgen`). Each assistant frame's text is a [`stamp`]: the frame's index and the
//! `CLOCK_REALTIME` time at which it was written, so a client reading the service's SSE stream on the same
//! machine can tell which frames arrived and how long each took from the CLI's stdout to its socket.
//!
//! Parameters are words of the prompt (see [`StreamPlan::from_prompt`]):
//! `scenario=stream frames=<n> rate=<frames per second, 0 = unpaced> start_at=<unix nanos> then=<result|hang>`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::scenario::{Ctx, Out, Outcome};
use crate::providers::cursor::wire::{ContentPart, Frame, Message, MessageFrame, ResultFrame, to_line};

/// The prefix of a stamp in an assistant text.
pub const STAMP_PREFIX: &str = "lg:";

/// What the `stream` scenario writes.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamPlan {
    /// Assistant frames to write (`frames=`, default 100).
    pub frames: u64,
    /// Frames per second (`rate=`); 0 writes as fast as the pipe takes them (default 0).
    pub rate: f64,
    /// Wall-clock time (Unix nanoseconds) before which the first frame is not written (`start_at=`).
    pub start_at: Option<u128>,
    /// After the frames: hang until killed (`then=hang`) instead of writing the terminal `result`.
    pub then_hang: bool,
}

impl Default for StreamPlan {
    fn default() -> Self {
        StreamPlan {
            frames: 100,
            rate: 0.0,
            start_at: None,
            then_hang: false,
        }
    }
}

impl StreamPlan {
    /// Reads `key=value` words of the prompt; unknown words and unparsable values keep the default.
    pub fn from_prompt(prompt: &str) -> StreamPlan {
        let mut plan = StreamPlan::default();
        for (k, v) in prompt.split_whitespace().filter_map(|w| w.split_once('=')) {
            match k {
                "frames" => plan.frames = v.parse().unwrap_or(plan.frames),
                "rate" => {
                    plan.rate = v
                        .parse::<f64>()
                        .ok()
                        .filter(|r| r.is_finite() && *r >= 0.0)
                        .unwrap_or(plan.rate)
                }
                "start_at" => plan.start_at = v.parse().ok(),
                "then" => plan.then_hang = v == "hang",
                _ => {}
            }
        }
        plan
    }
}

/// Nanoseconds since the Unix epoch on `CLOCK_REALTIME` (0 if the clock is before 1970).
pub fn now_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// The text of frame `index`, stamped now: `lg:<unix nanos>:<index>;`.
pub fn stamp(index: u64) -> String {
    format!("{STAMP_PREFIX}{}:{index};", now_nanos())
}

/// Finds the first stamp in `text` (which may be a whole event's JSON): `(unix nanos, index)`.
pub fn parse_stamp(text: &str) -> Option<(u128, u64)> {
    let at = text.find(STAMP_PREFIX)?;
    let rest = &text[at + STAMP_PREFIX.len()..];
    let (nanos, rest) = rest.split_once(':')?;
    let (index, _) = rest.split_once(';')?;
    Some((nanos.parse().ok()?, index.parse().ok()?))
}

fn sleep_until_nanos(target: u128) {
    let now = now_nanos();
    if target > now {
        let wait = u64::try_from(target - now).unwrap_or(u64::MAX);
        std::thread::sleep(Duration::from_nanos(wait));
    }
}

/// Writes the planned frames (after the opening the caller wrote), then the result or a hang.
pub fn play(ctx: &Ctx<'_>, out: &mut Out<'_>) -> (Outcome, Option<String>) {
    let plan = StreamPlan::from_prompt(&ctx.prompt);
    let sid = ctx.session_id.as_str();
    let start = plan.start_at.unwrap_or_else(now_nanos);
    sleep_until_nanos(start);
    let period = (plan.rate > 0.0).then(|| 1e9 / plan.rate);
    for i in 0..plan.frames {
        if let Some(p) = period {
            sleep_until_nanos(start + (i as f64 * p) as u128);
        }
        let frame = Frame::Assistant(MessageFrame {
            message: Message {
                role: Some("assistant".to_owned()),
                content: vec![ContentPart {
                    kind: "text".to_owned(),
                    text: Some(stamp(i)),
                }],
            },
            session_id: Some(sid.to_owned()),
        });
        out.raw(&to_line(&frame));
    }
    if plan.then_hang {
        return (Outcome::Hang, None);
    }
    let ms = ctx.started.elapsed().as_millis() as u64;
    let text = format!("streamed {} frames", plan.frames);
    out.raw(&to_line(&Frame::Result(ResultFrame {
        subtype: Some("success".to_owned()),
        is_error: Some(false),
        result: Some(text),
        session_id: Some(sid.to_owned()),
        duration_ms: Some(ms),
        duration_api_ms: Some(ms),
        request_id: Some(format!("req-fake-{}", ctx.previous_turns + 1)),
    })));
    (Outcome::Exit(0), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_comes_from_prompt_words_and_bad_values_keep_defaults() {
        let p = StreamPlan::from_prompt("scenario=stream frames=7 rate=2.5 start_at=12 then=hang");
        assert_eq!(
            p,
            StreamPlan {
                frames: 7,
                rate: 2.5,
                start_at: Some(12),
                then_hang: true
            }
        );
        let d = StreamPlan::from_prompt("scenario=stream frames=x rate=-1 start_at=? then=result");
        assert_eq!(d, StreamPlan::default());
    }

    #[test]
    fn a_stamp_round_trips_inside_json() {
        let s = stamp(42);
        let json = serde_json::json!({"payload": {"text": s}}).to_string();
        let (nanos, index) = parse_stamp(&json).unwrap();
        assert_eq!(index, 42);
        assert!(nanos > 1_600_000_000_000_000_000);
        assert_eq!(parse_stamp("no stamp here"), None);
        assert_eq!(parse_stamp("lg:12:x;"), None);
    }
}
