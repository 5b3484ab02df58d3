//! `fake-acp-agent`: a scripted fake ACP agent for the ACP client driver's tests (logic in
//! `testkit::fake_acp`). Crash scenarios abort the process (SIGABRT); hang scenarios sleep until killed.

use agent_adaptor::testkit::fake_acp::{Env, Flavor, Outcome, serve};

fn main() {
    let env = Env::from_process(Flavor::Generic);
    let stdin = std::io::BufReader::new(std::io::stdin());
    match serve(Flavor::Generic, env, stdin, std::io::stdout()) {
        Outcome::Exit(code) => std::process::exit(code),
        Outcome::Crash => std::process::abort(),
        Outcome::Hang => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
    }
}
