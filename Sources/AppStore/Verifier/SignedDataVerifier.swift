import Foundation
import StorekeeperLogging
import TextSafety

/// Verifies StoreKit 2 signed data (JWS) offline, as Apple's `SignedDataVerifier` does with
/// online checks off: the x5c leaf and intermediate chained to a configured root, Apple's
/// certificate markers, the chain's validity at the payload's `signedDate` (now when it has
/// none), the ES256 signature, then the app's bundle id and allowed environments. Payload
/// fields are all optional, as in Apple's models.
///
/// Safe to call from any thread; meant for Swift's cooperative pool, never an event loop.
public final class SignedDataVerifier: Sendable {
  public let configuration: AppStoreConfiguration
  let chains: ChainVerifier
  let cache: ChainCache
  let headers: HeaderMemo
  /// Seconds since 1970; only read for a payload that says nothing of when it was signed.
  let now: @Sendable () -> Int64
  /// Where a purchase refused for its environment is told to the operator; none for tools.
  let logger: Logger?

  /// Throws when an extra root is not a readable PEM certificate.
  public init(
    configuration: AppStoreConfiguration,
    now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) },
    logger: Logger? = nil
  ) throws {
    self.configuration = configuration
    self.logger = logger
    self.now = now
    self.chains = ChainVerifier(
      trust: try TrustStore(
        anchorPEM: AppleRootCertificates.appleRootCAG3PEM,
        extraPEMs: configuration.extraRootCertificatesPEM))
    self.cache = ChainCache(capacity: configuration.chainCacheCapacity)
    self.headers = HeaderMemo(capacity: configuration.chainCacheCapacity)
  }

  public func verifyTransaction(_ jws: String) -> VerificationResult<JWSTransactionDecodedPayload> {
    let result = verifySignedPayload(jws, as: JWSTransactionDecodedPayload.self)
    guard case .valid(let transaction) = result else { return result }
    guard transaction.bundleId == configuration.bundleId else { return .refused(.bundleIdMismatch) }
    guard configuration.allows(environment: transaction.environment) else {
      return configuration.refuseEnvironment(transaction.environment, logger: logger)
    }
    return .valid(transaction)
  }

  /// Renewal info carries no bundle id; it is bound to the app through its chain and the
  /// notification or transaction it arrives with.
  public func verifyRenewalInfo(_ jws: String) -> VerificationResult<JWSRenewalInfoDecodedPayload> {
    let result = verifySignedPayload(jws, as: JWSRenewalInfoDecodedPayload.self)
    guard case .valid(let renewal) = result else { return result }
    guard configuration.allows(environment: renewal.environment) else {
      return .refused(.environmentNotAllowed)
    }
    return .valid(renewal)
  }

  /// Everything up to and including the signature, then the typed payload.
  func verifySignedPayload<Payload: SignedPayload>(
    _ jws: String, as type: Payload.Type
  ) -> VerificationResult<Payload> {
    let token: CompactJWS
    do { token = try CompactJWS(jws) } catch { return .refused(.malformedJWS) }
    let header: ParsedHeader
    let (parsed, known) = headers.parse(token.headerBytes)
    switch parsed {
    case .success(let parsed): header = parsed
    case .failure(let reason): return .refused(reason)
    }
    // Foundation's decoder hashes the payload's keys: stream-safe first (`StreamSafeText`).
    guard StreamSafeText.isStreamSafe(json: token.payload),
      let payload = try? JSONDecoder().decode(Payload.self, from: Data(token.payload))
    else {
      return .refused(.malformedPayload)
    }
    let seconds = payload.signedDate.map(Self.seconds(fromMilliseconds:)) ?? now()

    let key: PublicKey
    switch leafKey(for: header, at: seconds) {
    case .success(let found): key = found
    case .failure(let failure): return .refused(failure.reason)
    }
    if !known { headers.remember(token.headerBytes, as: header) }
    guard Self.signatureVerifies(token, with: key) else { return .refused(.invalidSignature) }
    return .valid(payload)
  }

  /// The leaf's key once the chain is known good at `seconds`: from the cache when this exact
  /// chain was verified for a span that includes `seconds`, otherwise by verifying it now.
  private func leafKey(for header: ParsedHeader, at seconds: Int64) -> Result<
    PublicKey, ChainVerifier.Failure
  > {
    let fingerprint = header.fingerprint
    let ders = header.certificates
    if let cached = cache.lookup(fingerprint, at: seconds) { return .success(cached.leafKey) }
    // The presented root (ders[2]) is not read: the chain ends at a configured one.
    guard let leaf = X509Certificate(der: ders[0]),
      let intermediate = X509Certificate(der: ders[1])
    else { return .failure(.invalidCertificate) }
    return chains.verify(leaf: leaf, intermediate: intermediate, at: seconds).map {
      cache.store($0, for: fingerprint)
      return $0.leafKey
    }
  }

  private static func signatureVerifies(_ token: CompactJWS, with key: PublicKey) -> Bool {
    token.withSigningInput { key.verifyES256(signature: token.signature, message: $0) }
  }

  /// The whole seconds at or before `milliseconds`. Read from a payload not yet verified, so
  /// any Int64 (a subtraction before dividing trapped on one near `Int64.min`).
  static func seconds(fromMilliseconds milliseconds: Int64) -> Int64 {
    let (seconds, rest) = milliseconds.quotientAndRemainder(dividingBy: 1000)
    return rest < 0 ? seconds - 1 : seconds
  }
}
