//! `fake-cursor-agent`: a fake Cursor agent CLI for driver tests (logic in `testkit::fake_cursor`).
//! Crash scenarios abort the process (SIGABRT); hang scenarios sleep until killed.

use std::io::Write;

use agent_adaptor::testkit::fake_cursor::{Env, Outcome, run};

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let env = Env::from_process();
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr();
    let outcome = run(
        &argv,
        &env,
        &mut std::io::stdin().lock(),
        &mut stdout,
        &mut stderr,
    );
    let _ = stdout.flush();
    match outcome {
        Outcome::Exit(code) => std::process::exit(code),
        Outcome::Crash => std::process::abort(),
        Outcome::Hang => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
    }
}
