//! The one integration-test binary: each module is one area of the system.
mod codebuddy_lab;
mod cursor_fake;
