use std::io;

pub struct Good {
    n: u32,
}

impl Good {
    pub fn ok(&self) -> u32 {
        self.n + helper()
    }

    pub fn bad(&self) -> u32 {
        let x = ;
        x
    }

    pub fn after(&self) -> u32 {
        self.ok()
    }
}

fn helper() -> u32 {
    1 +
}

fn last() {
    io::stdout(
