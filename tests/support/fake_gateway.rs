//! A fake Thrift2 gateway on 127.0.0.1 for tests of `ThriftStore` against
//! replies a real gateway never sends: it reads each call's header and
//! answers as a test's script says. Messages are written with a small binary
//! Thrift writer of its own, independent of hmap's.

#![allow(dead_code)] // each test file uses part of it

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

/// What the fake does with one call.
pub enum Act {
    /// Send these bytes at once.
    Send(Vec<u8>),
    /// Send these bytes one at a time, `gap` apart.
    Dribble(Vec<u8>, Duration),
    /// Send these bytes, then close the connection.
    SendAndClose(Vec<u8>),
    /// Close the connection without a word.
    Close,
    /// Say nothing for this long, then close.
    Silent(Duration),
}

/// Starts a fake gateway that answers call `method` #`seq` as `script` says;
/// each connection is served by a thread of its own.
pub fn start(script: impl Fn(&str, i32) -> Act + Send + Sync + 'static) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    let script = Arc::new(script);
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let script = Arc::clone(&script);
            thread::spawn(move || serve(stream, &*script));
        }
    });
    addr
}

fn serve(mut stream: TcpStream, script: &(dyn Fn(&str, i32) -> Act + Send + Sync)) {
    loop {
        let Some((method, seq)) = read_call(&mut stream) else {
            return;
        };
        match script(&method, seq) {
            Act::Send(bytes) => {
                if stream.write_all(&bytes).is_err() {
                    return;
                }
            }
            Act::Dribble(bytes, gap) => {
                for b in bytes {
                    if stream.write_all(&[b]).is_err() {
                        return;
                    }
                    thread::sleep(gap);
                }
            }
            Act::SendAndClose(bytes) => {
                let _ = stream.write_all(&bytes);
                return;
            }
            Act::Close => return,
            Act::Silent(how_long) => {
                thread::sleep(how_long);
                return;
            }
        }
    }
}

/// Reads a call's header, and drains its arguments (sent in one piece).
fn read_call(stream: &mut TcpStream) -> Option<(String, i32)> {
    stream.set_read_timeout(None).ok()?;
    let mut word = [0u8; 4];
    stream.read_exact(&mut word).ok()?;
    stream.read_exact(&mut word).ok()?;
    let mut name = vec![0u8; usize::try_from(i32::from_be_bytes(word)).ok()?.min(1024)];
    stream.read_exact(&mut name).ok()?;
    stream.read_exact(&mut word).ok()?;
    let seq = i32::from_be_bytes(word);
    stream.set_read_timeout(Some(Duration::from_millis(50))).ok()?;
    let mut rest = [0u8; 64 * 1024];
    loop {
        match stream.read(&mut rest) {
            Ok(0) => return None,
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => break,
            Err(_) => return None,
        }
    }
    Some((String::from_utf8_lossy(&name).into_owned(), seq))
}

/// Thrift type bytes.
pub const BOOL: u8 = 2;
pub const BYTE: u8 = 3;
pub const I32: u8 = 8;
pub const I64: u8 = 10;
pub const STRING: u8 = 11;
pub const STRUCT: u8 = 12;
pub const MAP: u8 = 13;
pub const LIST: u8 = 15;

/// A binary Thrift message being written.
#[derive(Default)]
pub struct Msg(pub Vec<u8>);

impl Msg {
    /// A reply to `method` #`seq` (message type 2), positioned in its
    /// result struct.
    pub fn reply(method: &str, seq: i32) -> Msg {
        let mut m = Msg::default();
        m.i32(0x8001_0002_u32 as i32).string(method.as_bytes()).i32(seq);
        m
    }
    pub fn byte(&mut self, b: u8) -> &mut Self {
        self.0.push(b);
        self
    }
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn string(&mut self, v: &[u8]) -> &mut Self {
        self.i32(v.len() as i32);
        self.0.extend_from_slice(v);
        self
    }
    pub fn field(&mut self, kind: u8, id: i16) -> &mut Self {
        self.0.push(kind);
        self.0.extend_from_slice(&id.to_be_bytes());
        self
    }
    pub fn list(&mut self, elem: u8, len: i32) -> &mut Self {
        self.0.push(elem);
        self.i32(len)
    }
    pub fn stop(&mut self) -> &mut Self {
        self.0.push(0);
        self
    }
    pub fn done(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.0)
    }
}

/// A `getTableDescriptor` reply: table `t` with the given families.
pub fn descriptor(seq: i32, families: &[&str]) -> Vec<u8> {
    let mut m = Msg::reply("getTableDescriptor", seq);
    m.field(STRUCT, 0);
    m.field(STRUCT, 1).field(STRING, 2).string(b"t").stop();
    m.field(LIST, 2).list(STRUCT, families.len() as i32);
    for f in families {
        m.field(STRING, 1).string(f.as_bytes()).field(I32, 10).i32(1).stop();
    }
    m.stop().stop().done()
}

/// A `getAllRegionLocations` reply with no regions: a table not split,
/// for `describe_table`.
pub fn no_regions(seq: i32) -> Vec<u8> {
    let mut m = Msg::reply("getAllRegionLocations", seq);
    m.field(LIST, 0).list(STRUCT, 0);
    m.stop().done()
}

/// A TColumnValue's fields and stop.
pub fn column_value(m: &mut Msg, family: &str, qualifier: &str, value: &[u8]) {
    m.field(STRING, 1).string(family.as_bytes());
    m.field(STRING, 2).string(qualifier.as_bytes());
    m.field(STRING, 3).string(value);
    m.field(I64, 4).i64(1).stop();
}
