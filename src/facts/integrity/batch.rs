//! Batch verification of Ed25519 signatures (§10.3): the answer for each signature of a batch,
//! found with one multiscalar multiplication for the whole batch instead of one double scalar
//! multiplication per signature.
//!
//! A valid signature `(R, s)` of message `M` under key `A` satisfies `[s]B = R + [k]A` with
//! `k = SHA-512(R ‖ A ‖ M)`. For a batch, with a 128-bit weight `z` per signature derived from a
//! hash of every input (so the batch is reproducible and its weights cannot be chosen by whoever
//! wrote the signatures), the batch holds when
//! `Σ z·R + Σ_keys (Σ z·k)·A − (Σ z·s)·B` is the identity. A lint's signatures are nearly all
//! under one key, so each key is one point of the sum, not one per signature. When a batch does
//! not hold, it is split and each part checked again, down to single verifications: a bad
//! signature always gets the single verification's answer.
//!
//! Where a batch's answer could differ from `VerifyingKey::verify` (cofactorless, comparing `R`'s
//! bytes), the signature is verified alone instead: a non-canonical `s` or `R` encoding, an `R`
//! that does not decode, a key with a small-order component. What remains is an `R` with a
//! small-order component that cancels in the weighted sum: such a signature is made on purpose,
//! by the holder of a trusted private key, and only there may the batch accept what the single
//! verification refuses (ARCHITECTURE.md, "Batch verification"). Every other answer is the single
//! verification's, without exception.

use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{IsIdentity, VartimeMultiscalarMul};
use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use sha2::{Digest, Sha512};

/// One signature to verify.
#[derive(Clone, Copy, Debug)]
pub struct Job<'a> {
    pub key: &'a VerifyingKey,
    pub msg: &'a [u8],
    pub sig: &'a Signature,
}

/// A batch this small or smaller is verified signature by signature when it fails (splitting it
/// further costs more than the single verifications).
const SINGLE_AT: usize = 16;
/// A failing batch is split into this many parts, each checked again.
const SPLIT: usize = 8;

/// Whether each signature of `jobs` verifies, as `job.key.verify(job.msg, job.sig)` would say.
pub fn verify_each(jobs: &[Job<'_>]) -> Vec<bool> {
    let mut out = vec![false; jobs.len()];
    let mut keys: Vec<KeyPoint> = Vec::new();
    let mut prepared: Vec<Prepared> = Vec::with_capacity(jobs.len());
    for (i, job) in jobs.iter().enumerate() {
        match prepare(i, job, &mut keys) {
            Some(p) => prepared.push(p),
            None => out[i] = single(job),
        }
    }
    let weights = weights(&prepared);
    let all: Vec<usize> = (0..prepared.len()).collect();
    settle(&all, &prepared, &weights, &keys, jobs, &mut out);
    out
}

fn single(job: &Job<'_>) -> bool {
    job.key.verify(job.msg, job.sig).is_ok()
}

/// A distinct key of the batch: its bytes and point.
struct KeyPoint {
    bytes: [u8; 32],
    point: EdwardsPoint,
}

/// A signature ready for the batch equation.
struct Prepared {
    /// Index in the jobs.
    job: usize,
    /// Index in the keys.
    key: usize,
    r: EdwardsPoint,
    r_bytes: [u8; 32],
    s: Scalar,
    k: Scalar,
}

/// The signature's parts, or `None` when its answer must come from the single verification.
fn prepare(job_index: usize, job: &Job<'_>, keys: &mut Vec<KeyPoint>) -> Option<Prepared> {
    let bytes = job.sig.to_bytes();
    let (r_bytes, s_bytes) = bytes.split_at(32);
    let r_bytes: [u8; 32] = r_bytes.try_into().ok()?;
    let s_bytes: [u8; 32] = s_bytes.try_into().ok()?;
    let s = Option::<Scalar>::from(Scalar::from_canonical_bytes(s_bytes))?;
    if !canonical_point_encoding(&r_bytes) {
        return None;
    }
    let r = CompressedEdwardsY(r_bytes).decompress()?;
    let key_bytes = job.key.as_bytes();
    let key = match keys.iter().position(|k| &k.bytes == key_bytes) {
        Some(i) => i,
        None => {
            let point = job.key.to_edwards();
            // A key with a small-order component: the batch equation could hide it.
            if !point.is_torsion_free() {
                return None;
            }
            keys.push(KeyPoint {
                bytes: *key_bytes,
                point,
            });
            keys.len() - 1
        }
    };
    // Keys that failed the check above are never pushed, so a repeat of one is rechecked: fine,
    // such keys are not expected at all.
    let mut h = Sha512::new();
    h.update(r_bytes);
    h.update(key_bytes);
    h.update(job.msg);
    let k = Scalar::from_bytes_mod_order_wide(&h.finalize().into());
    Some(Prepared {
        job: job_index,
        key,
        r,
        r_bytes,
        s,
        k,
    })
}

/// Whether 32 bytes are the canonical encoding of a curve point's `y` and `x` sign (what
/// `compress` gives back): `y` below 2^255 − 19, and no negative sign on `x = 0` (`y = ±1`). The
/// single verification compares `R`'s bytes with a compressed point, so it refuses the others.
fn canonical_point_encoding(bytes: &[u8; 32]) -> bool {
    let sign = bytes[31] >> 7;
    let mut y = *bytes;
    y[31] &= 0x7f;
    // y ≥ p = 2^255 − 19: bytes 1..=30 all 0xff, byte 31 = 0x7f, byte 0 ≥ 0xed.
    let at_least_p = y[31] == 0x7f && y[1..31].iter().all(|&b| b == 0xff) && y[0] >= 0xed;
    if at_least_p {
        return false;
    }
    // y = 1 or y = p − 1 (x = 0): the sign bit must be clear.
    let one = y[0] == 1 && y[1..].iter().all(|&b| b == 0);
    let minus_one = y[0] == 0xec && y[1..31].iter().all(|&b| b == 0xff) && y[31] == 0x7f;
    !(sign == 1 && (one || minus_one))
}

/// A 128-bit weight per prepared signature, from a hash of every signature's `k`, `R` and `s`.
fn weights(prepared: &[Prepared]) -> Vec<Scalar> {
    let mut seed = Sha512::new();
    seed.update(b"ryechain ed25519 batch weights v1");
    for p in prepared {
        seed.update(p.k.as_bytes());
        seed.update(p.r_bytes);
        seed.update(p.s.as_bytes());
    }
    let seed = seed.finalize();
    let mut out = Vec::with_capacity(prepared.len());
    let mut i = 0u64;
    while out.len() < prepared.len() {
        let block = Sha512::new()
            .chain_update(seed)
            .chain_update(i.to_le_bytes())
            .finalize();
        for chunk in block.chunks_exact(16) {
            if out.len() == prepared.len() {
                break;
            }
            let mut z = [0u8; 16];
            z.copy_from_slice(chunk);
            out.push(Scalar::from(u128::from_le_bytes(z)));
        }
        i += 1;
    }
    out
}

/// Answer every signature of `group` (indices into `prepared`): all valid when the batch holds,
/// otherwise each part of a split, down to single verifications.
fn settle(
    group: &[usize],
    prepared: &[Prepared],
    weights: &[Scalar],
    keys: &[KeyPoint],
    jobs: &[Job<'_>],
    out: &mut [bool],
) {
    if group.is_empty() {
        return;
    }
    if group.len() > 1 && holds(group, prepared, weights, keys) {
        for &i in group {
            out[prepared[i].job] = true;
        }
        return;
    }
    if group.len() <= SINGLE_AT {
        for &i in group {
            let job = prepared[i].job;
            out[job] = single(&jobs[job]);
        }
        return;
    }
    for part in group.chunks(group.len().div_ceil(SPLIT)) {
        settle(part, prepared, weights, keys, jobs, out);
    }
}

/// Whether the batch equation holds for `group`.
fn holds(group: &[usize], prepared: &[Prepared], weights: &[Scalar], keys: &[KeyPoint]) -> bool {
    let mut b = Scalar::ZERO;
    let mut per_key = vec![Scalar::ZERO; keys.len()];
    for &i in group {
        let (p, z) = (&prepared[i], &weights[i]);
        b += z * p.s;
        per_key[p.key] += z * p.k;
    }
    let scalars = std::iter::once(-b)
        .chain(group.iter().map(|&i| weights[i]))
        .chain(per_key.iter().copied());
    let points = std::iter::once(ED25519_BASEPOINT_POINT)
        .chain(group.iter().map(|&i| prepared[i].r))
        .chain(keys.iter().map(|k| k.point));
    EdwardsPoint::vartime_multiscalar_mul(scalars, points).is_identity()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signer, SigningKey};

    fn key(seed: u8) -> SigningKey {
        SigningKey::from_bytes(&[seed; 32])
    }

    struct Case {
        key: VerifyingKey,
        msg: Vec<u8>,
        sig: Signature,
    }

    fn signed(signer: &SigningKey, n: usize) -> Vec<Case> {
        (0..n)
            .map(|i| {
                let msg = format!("{i:064x}").into_bytes();
                Case {
                    key: signer.verifying_key(),
                    sig: signer.sign(&msg),
                    msg,
                }
            })
            .collect()
    }

    fn check(cases: &[Case]) -> Vec<bool> {
        let jobs: Vec<Job<'_>> = cases
            .iter()
            .map(|c| Job {
                key: &c.key,
                msg: &c.msg,
                sig: &c.sig,
            })
            .collect();
        let got = verify_each(&jobs);
        let want: Vec<bool> = jobs.iter().map(single).collect();
        assert_eq!(got, want, "batch and single verification differ");
        got
    }

    fn with_bytes(sig: &Signature, f: impl FnOnce(&mut [u8; 64])) -> Signature {
        let mut b = sig.to_bytes();
        f(&mut b);
        Signature::from_bytes(&b)
    }

    #[test]
    fn valid_batches_of_every_size_verify() {
        for n in [0, 1, 2, 3, 17, 200, 300] {
            let mut cases = signed(&key(1), n);
            // A second key in the larger batches.
            cases.extend(signed(&key(2), n / 3));
            assert!(check(&cases).iter().all(|&ok| ok), "n = {n}");
        }
    }

    #[test]
    fn each_bad_signature_is_found_among_good_ones() {
        let mut cases = signed(&key(1), 400);
        let other = key(9);
        // A flipped bit of s, of R, another message, another key, a signature of another key.
        cases[3].sig = with_bytes(&cases[3].sig, |b| b[40] ^= 1);
        cases[77].sig = with_bytes(&cases[77].sig, |b| b[5] ^= 0x10);
        cases[150].msg[0] ^= 1;
        cases[151].key = other.verifying_key();
        cases[399].sig = other.sign(&cases[399].msg);
        let got = check(&cases);
        let bad: Vec<usize> = (0..got.len()).filter(|&i| !got[i]).collect();
        assert_eq!(bad, [3, 77, 150, 151, 399]);
    }

    #[test]
    fn a_batch_of_bad_signatures_is_all_refused() {
        let mut cases = signed(&key(3), 100);
        for c in &mut cases {
            c.msg[1] ^= 2;
        }
        assert!(check(&cases).iter().all(|&ok| !ok));
    }

    #[test]
    fn non_canonical_encodings_get_the_single_answer() {
        let mut cases = signed(&key(4), 40);
        // s + ℓ: the same scalar, not canonical (the single verification refuses it).
        let l: [u8; 32] = [
            0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9,
            0xde, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
        ];
        cases[5].sig = with_bytes(&cases[5].sig, |b| {
            let mut carry = 0u16;
            for (x, y) in b[32..].iter_mut().zip(l) {
                let t = u16::from(*x) + u16::from(y) + carry;
                *x = t as u8;
                carry = t >> 8;
            }
        });
        // R = y ≥ p, and R = (0, 1) with the sign bit set: both decode, neither is canonical.
        cases[6].sig = with_bytes(&cases[6].sig, |b| {
            b[..32].copy_from_slice(&[0xff; 32]);
            b[0] = 0xee;
            b[31] = 0x7f;
        });
        cases[7].sig = with_bytes(&cases[7].sig, |b| {
            b[..32].fill(0);
            b[0] = 1;
            b[31] = 0x80;
        });
        let got = check(&cases);
        assert!(!got[5] && !got[6] && !got[7]);
        assert_eq!(got.iter().filter(|&&ok| ok).count(), 37);
    }

    #[test]
    fn canonical_encoding_matches_compression() {
        let mut patterns: Vec<[u8; 32]> = Vec::new();
        for low in [0x00u8, 0x01, 0x02, 0xeb, 0xec, 0xed, 0xee, 0xff] {
            for sign in [0u8, 0x80] {
                let mut high = [0xffu8; 32];
                high[0] = low;
                high[31] = 0x7f | sign;
                patterns.push(high);
                let mut small = [0u8; 32];
                small[0] = low;
                small[31] = sign;
                patterns.push(small);
            }
        }
        for seed in 0..50u8 {
            patterns.push(key(seed).verifying_key().to_bytes());
        }
        let mut decoded = 0;
        for p in patterns {
            if let Some(point) = CompressedEdwardsY(p).decompress() {
                decoded += 1;
                assert_eq!(
                    canonical_point_encoding(&p),
                    point.compress().to_bytes() == p,
                    "{p:02x?}"
                );
            }
        }
        assert!(decoded > 50, "too few patterns decode: {decoded}");
    }

    /// A signature made by hand with `signer`'s secret scalar: nonce `r`, `R` given by its bytes
    /// (`r·B`'s or another encoding), hashed with the key bytes `a_bytes`.
    fn by_hand(
        signer: &SigningKey,
        r: Scalar,
        r_bytes: [u8; 32],
        a_bytes: &[u8; 32],
        msg: &[u8],
    ) -> Signature {
        let k = Scalar::from_bytes_mod_order_wide(
            &Sha512::new()
                .chain_update(r_bytes)
                .chain_update(a_bytes)
                .chain_update(msg)
                .finalize()
                .into(),
        );
        let s = r + k * signer.to_scalar();
        let mut b = [0u8; 64];
        b[..32].copy_from_slice(&r_bytes);
        b[32..].copy_from_slice(s.as_bytes());
        Signature::from_bytes(&b)
    }

    fn order_two() -> EdwardsPoint {
        let mut b = [0xffu8; 32];
        b[0] = 0xec;
        b[31] = 0x7f;
        CompressedEdwardsY(b).decompress().unwrap()
    }

    #[test]
    fn a_hand_made_signature_with_r_encoded_otherwise_is_refused() {
        // r = 0: R is the identity, (0, 1), written with x's sign bit set. The group equation
        // holds; the single verification refuses the encoding, so the batch must too.
        let signer = key(6);
        let mut cases = signed(&signer, 40);
        let mut r_bytes = [0u8; 32];
        r_bytes[0] = 1;
        r_bytes[31] = 0x80;
        let a = signer.verifying_key().to_bytes();
        cases[9].sig = by_hand(&signer, Scalar::ZERO, r_bytes, &a, &cases[9].msg);
        // The same by hand with R canonical verifies (the helper is right).
        r_bytes[31] = 0;
        cases[10].sig = by_hand(&signer, Scalar::ZERO, r_bytes, &a, &cases[10].msg);
        let got = check(&cases);
        assert!(!got[9] && got[10]);
    }

    #[test]
    fn hand_made_signatures_under_a_key_with_a_small_order_component_get_the_single_answer() {
        // A' = A + T: with s = r + k'·a, the single verification holds exactly when k' is even;
        // the batch equation would leave Σ z·k'·T, which vanishes for half the batches.
        let signer = key(7);
        let odd_key = VerifyingKey::from_bytes(
            &(signer.verifying_key().to_edwards() + order_two())
                .compress()
                .to_bytes(),
        )
        .unwrap();
        let a = odd_key.to_bytes();
        for batch in 0..12u64 {
            let cases: Vec<Case> = (0..24u64)
                .map(|i| {
                    let msg = format!("{batch}-{i}").into_bytes();
                    let r = Scalar::from(1000 + batch * 100 + i);
                    let r_bytes = (ED25519_BASEPOINT_POINT * r).compress().to_bytes();
                    Case {
                        key: odd_key,
                        sig: by_hand(&signer, r, r_bytes, &a, &msg),
                        msg,
                    }
                })
                .collect();
            let got = check(&cases);
            assert!(got.iter().any(|&ok| ok) && got.iter().any(|&ok| !ok));
        }
    }

    #[test]
    fn a_key_with_a_small_order_component_is_verified_alone() {
        // A + T (T of order 2, (0, -1)): not torsion-free; its signatures are checked singly.
        let signer = key(5);
        let t = order_two();
        let odd = VerifyingKey::from_bytes(
            &(signer.verifying_key().to_edwards() + t)
                .compress()
                .to_bytes(),
        )
        .unwrap();
        let mut cases = signed(&signer, 30);
        cases[2].key = odd;
        let got = check(&cases);
        assert!(!got[2]);
    }
}
