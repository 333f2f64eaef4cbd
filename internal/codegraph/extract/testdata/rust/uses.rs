extern crate alloc;
extern crate serde_json as json;

use std::collections::HashMap;
use std::io::Write as IoWrite;
use std::fmt::*;
use std::{
    fs::File,
    io,
    sync::{atomic::{AtomicUsize, Ordering}, Arc, Mutex as Lock},
};
use crate::config::{self, Config};
use super::{self as parent, *};
use self::sub::Thing;
use regex;
use anyhow as ah;
use ::std::mem;
use {serde, tokio::spawn};
pub use crate::api::{Client, Client as DefaultClient};
pub(crate) use r#async::r#await;
use std::ops::{Add, Sub, Mul, Add as Plus};

mod sub {
    pub struct Thing;
}

fn main() {
    use std::time::Duration as D;
    let _ = D::from_secs(1);
}
