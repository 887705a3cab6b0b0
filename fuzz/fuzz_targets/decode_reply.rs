//! Decodes arbitrary bytes as a Thrift2 or Thrift1 gateway's reply: the skim that finds
//! where a message ends (whole, and fed in pieces), then each result reader
//! hmap uses. Nothing may panic, overflow the stack or hang, and the skim and
//! the decoder must agree (see `hmap::store::__fuzz_thrift_reply`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hmap::store::__fuzz_thrift_reply(data);
});
