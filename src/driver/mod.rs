//! The Driver SPI: what a provider implements and what the core gives it.

pub mod process;
