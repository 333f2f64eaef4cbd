mod flags;

pub use flags::Args;

pub fn parse() -> Args {
    let mut a = Args::default();
    a.fill(flags::defaults());
    a
}

pub fn report(at: usize) {
    eprintln!("match at {}", at);
}
