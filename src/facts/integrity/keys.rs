//! Ed25519 keys (§10.3): fingerprints of public-key PEM bytes, PEM (SPKI / PKCS#8) codecs, and
//! signing / verifying the ASCII hex content hash. Pure: randomness for new keys comes from the edge.

use base64::Engine;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{Signature as EdSignature, Signer, SigningKey, VerifyingKey};

use super::hash::sha256_hex;

/// Why a key could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("not an Ed25519 public key in SPKI PEM form: {0}")]
    BadPublicPem(String),
    #[error("not an unencrypted Ed25519 private key in PKCS#8 PEM form: {0}")]
    BadPrivatePem(String),
    #[error("cannot encode the key: {0}")]
    Encode(String),
}

/// First 16 hex chars of SHA-256 of the public-key PEM bytes exactly as stored (§10.3).
pub fn fingerprint(pem: &[u8]) -> String {
    sha256_hex(pem)[..16].to_owned()
}

/// Parse an SPKI PEM public key.
pub fn public_key_from_pem(pem: &str) -> Result<VerifyingKey, KeyError> {
    VerifyingKey::from_public_key_pem(pem).map_err(|e| KeyError::BadPublicPem(e.to_string()))
}

/// Parse an unencrypted PKCS#8 PEM private key.
pub fn signing_key_from_pem(pem: &str) -> Result<SigningKey, KeyError> {
    SigningKey::from_pkcs8_pem(pem).map_err(|e| KeyError::BadPrivatePem(e.to_string()))
}

/// A key pair as the PEM texts ryechain writes (LF line endings, trailing newline).
#[derive(Clone, Debug)]
pub struct KeyPairPem {
    pub private_pem: String,
    pub public_pem: String,
}

/// The PEM texts of the key pair with this 32-byte secret seed.
pub fn key_pair_from_seed(seed: &[u8; 32]) -> Result<KeyPairPem, KeyError> {
    let key = SigningKey::from_bytes(seed);
    pem_pair(&key)
}

/// PEM texts of a signing key and its public half.
pub fn pem_pair(key: &SigningKey) -> Result<KeyPairPem, KeyError> {
    let private_pem = key
        .to_pkcs8_pem(LineEnding::LF)
        .map_err(|e| KeyError::Encode(e.to_string()))?
        .to_string();
    let public_pem = public_pem(&key.verifying_key())?;
    Ok(KeyPairPem {
        private_pem,
        public_pem,
    })
}

/// SPKI PEM of a public key.
pub fn public_pem(key: &VerifyingKey) -> Result<String, KeyError> {
    key.to_public_key_pem(LineEnding::LF)
        .map_err(|e| KeyError::Encode(e.to_string()))
}

/// Sign the ASCII bytes of the hex hash; base64url with padding, as the Python reference writes.
pub fn sign_hash(key: &SigningKey, content_hash: &str) -> String {
    URL_SAFE.encode(key.sign(content_hash.as_bytes()).to_bytes())
}

/// Whether `signature` (base64url, padded or not) is a valid signature of the hex hash.
#[cfg(any(test, feature = "testing"))]
pub fn verify_hash(key: &VerifyingKey, content_hash: &str, signature: &str) -> bool {
    use ed25519_dalek::Verifier;
    decode_signature(signature).is_some_and(|sig| key.verify(content_hash.as_bytes(), &sig).is_ok())
}

/// A signature's 64 bytes from its base64url text (padded or not); `None` when it is not one
/// (which no key verifies).
pub fn decode_signature(signature: &str) -> Option<EdSignature> {
    let bytes = URL_SAFE_NO_PAD
        .decode(signature.trim_end_matches('='))
        .ok()?;
    EdSignature::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §10.3 test vector.
    pub const SEED3_PEM: &str = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAgc0X8VKJuKzFh/aSw/XeYEdp3keIqncwu9ySd81Y69g=\n-----END PUBLIC KEY-----\n";

    #[test]
    fn fingerprint_vector() {
        assert_eq!(fingerprint(SEED3_PEM.as_bytes()), "4b987fd4e40303ac");
    }

    #[test]
    fn seed3_signature_verifies_padded_and_unpadded() {
        let key = public_key_from_pem(SEED3_PEM).unwrap();
        let hash = "055b049709664ff5c85c8d5bc20c6b8ff00615529fdd78af4c436c3176f386b9";
        let sig = "c67apy3VwDuCGNPs3uXUq8q2kvZJDjiD3YC_PtII6HvrXSpaeBjMipQenW8vTgbKH3sqzuuAAqn-ymsEUfinAg==";
        assert!(verify_hash(&key, hash, sig));
        assert!(verify_hash(&key, hash, sig.trim_end_matches('=')));
        let other = hash.replace('0', "1");
        assert!(!verify_hash(&key, &other, sig));
        assert!(!verify_hash(&key, hash, "not*base64"));
    }

    #[test]
    fn generated_pair_round_trips() {
        let pair = key_pair_from_seed(&[7; 32]).unwrap();
        assert!(pair.public_pem.starts_with("-----BEGIN PUBLIC KEY-----\n"));
        assert!(pair.public_pem.ends_with("-----END PUBLIC KEY-----\n"));
        let sk = signing_key_from_pem(&pair.private_pem).unwrap();
        let pk = public_key_from_pem(&pair.public_pem).unwrap();
        let sig = sign_hash(&sk, "abc");
        assert!(verify_hash(&pk, "abc", &sig));
        assert!(matches!(
            public_key_from_pem("-----BEGIN PUBLIC KEY-----\nMCow\n"),
            Err(KeyError::BadPublicPem(_))
        ));
    }
}
