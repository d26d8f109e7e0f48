//! `coalprof setup`: plans the steps of the components asked for, then lists them
//! (`--dry-run`, on stdout) or runs them with a progress bar and one line per step on stderr.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::Result;
use crate::exit::Exit;
use crate::messages;
use crate::tools::setup::{self, seconds, stage, Report, Request, State, Step};

pub(crate) fn run(req: &Request) -> Result<Exit> {
    let steps = setup::plan(req);
    for old in stage::leftovers(&req.home.root) {
        messages::note(format!(
            "`{}` is left from a setup that was killed; it is not used, and can be removed",
            old.display()
        ));
    }
    if req.dry_run {
        super::print(&listing(&steps))?;
        return Ok(Exit::Ok);
    }
    let to_run = steps.iter().filter(|s| matches!(s.state, State::Missing(_))).count();
    let ui = Bar::new(to_run as u64);
    let done = setup::install(steps, &ui);
    ui.bar.finish_and_clear();
    done?;
    Ok(Exit::Ok)
}

/// `--dry-run`: one line per step, what it would do or what is already there.
fn listing(steps: &[Step]) -> String {
    let mut out = String::new();
    for s in steps {
        let state = match &s.state {
            State::Present(what) => format!("already there: {what}"),
            State::Missing(what) => format!("would {what}"),
            State::Blocked(e) => match e.hint() {
                Some(h) => format!("cannot: {e} (fix: {h})"),
                None => format!("cannot: {e}"),
            },
        };
        out.push_str(&format!("{}: {}: {state}\n", s.component.name(), s.title));
    }
    out
}

/// The progress bar (stderr, drawn only on a terminal) and the step lines above it.
struct Bar {
    bar: ProgressBar,
}

impl Bar {
    fn new(steps: u64) -> Bar {
        let target =
            if std::io::stderr().is_terminal() { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(Some(steps), target);
        bar.set_style(
            ProgressStyle::with_template("{spinner} setup [{bar:20}] {pos}/{len} {elapsed:>4} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        Bar { bar }
    }

    fn line(&self, text: String) {
        self.bar.suspend(|| messages::progress(text));
    }
}

impl Report for Bar {
    fn skipped(&self, step: &Step, what: &str) {
        self.line(format!("{}: {}: already there ({what})", step.component.name(), step.title));
    }

    fn started(&self, step: &Step, _what: &str) {
        self.bar.set_message(format!("{}: {}", step.component.name(), step.title));
    }

    fn doing(&self, what: &str) {
        tracing::info!("{what}");
        self.bar.set_message(what.to_string());
    }

    fn finished(&self, step: &Step, what: &str, took: Duration) {
        self.bar.inc(1);
        self.line(format!("{}: {}: installed in {} ({what})", step.component.name(), step.title, seconds(took)));
    }
}
