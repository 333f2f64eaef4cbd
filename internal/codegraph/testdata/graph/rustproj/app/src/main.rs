mod cli;

use core::Matcher;

fn main() {
    let args = cli::parse();
    let m = Matcher::new(&args.pattern);
    run(&m, &args.path);
    println!("{}", core::version());
}

fn run(m: &Matcher, path: &str) {
    if let Some(i) = m.find(path) {
        cli::report(i);
    }
}
