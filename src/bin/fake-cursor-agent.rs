//! `fake-cursor-agent`: a fake Cursor agent CLI for driver tests (logic in `testkit::fake_cursor`).
//! Crash scenarios abort the process (SIGABRT); hang scenarios sleep until killed. `acp` serves the Agent
//! Client Protocol on stdio (`testkit::fake_acp`, Cursor flavour), as `agent acp` does.

use std::io::Write;

use agent_adaptor::testkit::fake_acp;
use agent_adaptor::testkit::fake_cursor::{Env, Outcome, acp_mode, run};

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if acp_mode(&argv).is_some() {
        let env = fake_acp::Env::from_process(fake_acp::Flavor::Cursor);
        let stdin = std::io::BufReader::new(std::io::stdin());
        let outcome = fake_acp::serve(fake_acp::Flavor::Cursor, env, stdin, std::io::stdout());
        finish(match outcome {
            fake_acp::Outcome::Exit(c) => Outcome::Exit(c),
            fake_acp::Outcome::Crash => Outcome::Crash,
            fake_acp::Outcome::Hang => Outcome::Hang,
        });
    }
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
    finish(outcome);
}

fn finish(outcome: Outcome) -> ! {
    match outcome {
        Outcome::Exit(code) => std::process::exit(code),
        Outcome::Crash => std::process::abort(),
        Outcome::Hang => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
    }
}
