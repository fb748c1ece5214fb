//! Seeded, bounded fuzzing for the test suite: a small deterministic generator, the iteration
//! count (`PI_FUZZ_ITERS` for longer runs), and mutations of valid inputs into near-valid ones.
//!
//! Every fuzz test fixes its seed in the source, so a failure reproduces with the same command;
//! the failing input is printed by the test's assertion.

/// The number of iterations: `PI_FUZZ_ITERS` when set, else `default` (chosen so a test takes
/// well under a second).
pub fn iters(default: usize) -> usize {
    std::env::var("PI_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// SplitMix64: tiny, fast and good enough to pick mutations.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// `len` random bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }
}

/// Bytes that JSON parsers and stream readers find interesting.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"null",
    b"true",
    b"-1",
    b"1e999",
    b"0.5",
    b"\\u0000",
    b"\\ud800",
    b"\\",
    b"\n",
    b"\r\n",
    b"\r",
    b"data: ",
    b"event: ",
    b"[DONE]",
    b"\xff",
    b"\xe2\x80\xa8",
    b"\xf0\x9f\x98",
    b"\"type\"",
    b"\"id\"",
    b"\"role\"",
    b"\"content\"",
    b"\"text\"",
    b"9007199254740993",
];

/// One random change to `input`: a byte flipped, a span cut, duplicated or truncated, or a token
/// inserted. Applied a few times, a valid document becomes a near-valid one, which reaches much
/// deeper into a parser than random bytes do.
pub fn mutate(rng: &mut Rng, input: &mut Vec<u8>) {
    let len = input.len();
    match rng.below(7) {
        0 if len > 0 => {
            let i = rng.below(len);
            input[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let start = rng.below(len);
            let end = (start + 1 + rng.below(16)).min(len);
            input.drain(start..end);
        }
        2 if len > 0 => {
            let start = rng.below(len);
            let end = (start + 1 + rng.below(64)).min(len);
            let span = input[start..end].to_vec();
            let at = rng.below(len + 1);
            input.splice(at..at, span);
        }
        3 => input.truncate(rng.below(len + 1)),
        4 => {
            let at = rng.below(len + 1);
            let token = rng.pick(TOKENS).to_vec();
            input.splice(at..at, token);
        }
        5 if len > 0 => {
            let i = rng.below(len);
            input[i] = rng.next_u64() as u8;
        }
        _ => {
            let at = rng.below(len + 1);
            let len = 1 + rng.below(8);
            let junk = rng.bytes(len);
            input.splice(at..at, junk);
        }
    }
}

/// `seed` with 1 to 8 mutations applied.
pub fn mutated(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut out = seed.to_vec();
    for _ in 0..1 + rng.below(8) {
        mutate(rng, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_mutations() {
        let seed = br#"{"type":"prompt","message":"hi"}"#;
        let a: Vec<Vec<u8>> = {
            let mut rng = Rng::new(7);
            (0..50).map(|_| mutated(&mut rng, seed)).collect()
        };
        let mut rng = Rng::new(7);
        let b: Vec<Vec<u8>> = (0..50).map(|_| mutated(&mut rng, seed)).collect();
        assert_eq!(a, b);
        assert!(a.iter().any(|m| m.as_slice() != seed), "mutations change the input");
    }
}
