//! The runtime: the public nouns (Agent, Thread, Stream, Event, Result) and their orchestration.
