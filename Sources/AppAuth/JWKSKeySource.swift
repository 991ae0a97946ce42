import Foundation
import StorekeeperLogging

/// Keys from a JWKS URL (`APP_JWT_JWKS_URL`), cached. The document is fetched on first use,
/// again when a token names a `kid` it does not hold (so a rotated-in key works at once) or when
/// it is older than `maxAge` (so a removed key stops working) — but never more often than
/// `minRefetchInterval`, so tokens with made-up ids cannot make this server hammer the issuer.
/// A key held when the document is merely old is used at once while the refetch runs behind
/// it: a slow or unreachable issuer would otherwise hold up every token check, up to the
/// fetch's timeout, once per interval. A failed fetch keeps the last good document; with none,
/// nothing verifies (fail closed).
public actor JWKSKeySource: JWTKeySource {
  private let fetcher: any JWKSFetching
  private let minRefetchInterval: Duration
  private let maxAge: Duration
  private let logger: Logger
  private let clock = ContinuousClock()
  private var keys: [JWTKey] = []
  private var fetchedAt: ContinuousClock.Instant?
  private var lastAttempt: ContinuousClock.Instant?
  /// The fetch under way, which concurrent callers wait for instead of starting their own. It
  /// stores what it fetched before it completes: a caller resumed by its completion (the actor
  /// is reentrant, so in any order) always finds the new keys.
  private var inFlight: Task<Void, Never>?
  /// The fetches that failed since the last one that succeeded, for `health`.
  private var failure: Health.Failure?
  private var failuresTotal: Int64 = 0
  private var fetchedAtMs: Int64?
  private let createdAtMs = JWKSKeySource.nowMs

  /// What an operator needs to know of the key set: whether one was ever fetched, and whether
  /// the last fetch failed (an unreachable issuer, a wrong URL answering 404 or a page that is
  /// not a key set). A source that never fetched verifies no token.
  public struct Health: Sendable, Equatable {
    public struct Failure: Sendable, Equatable {
      /// The last failure's reason (`HTTP status 404`, `not a key set`, …).
      public var detail: String
      /// When the first of the failures in a row happened, in ms since 1970.
      public var sinceMs: Int64
      /// Failures in a row, since the last fetch that succeeded.
      public var count: Int64
    }
    /// Keys held now (0 until a fetch succeeds).
    public var keys: Int
    /// When the key set held was fetched, in ms since 1970; nil when none ever was.
    public var fetchedAtMs: Int64?
    /// The failures since the last success, nil when the last fetch succeeded (or none ran).
    public var failure: Failure?
    /// Failed fetches since start.
    public var failuresTotal: Int64
    /// When this source was made (the server's start), in ms since 1970.
    public var createdAtMs: Int64
  }

  public var health: Health {
    Health(
      keys: keys.count, fetchedAtMs: fetchedAtMs, failure: failure, failuresTotal: failuresTotal,
      createdAtMs: createdAtMs)
  }

  /// Fetches the key set now and waits for it (or for the fetch under way), so a wrong URL or
  /// an unreachable issuer shows before the first token needs it; `health` tells how it went.
  /// Counts as an attempt for `minRefetchInterval`.
  public func prefetch() async {
    if inFlight == nil { lastAttempt = nil }
    await refreshIfAllowed()?.value
  }

  public init(
    fetcher: any JWKSFetching, minRefetchInterval: Duration = .seconds(60),
    maxAge: Duration = .seconds(3600), logger: Logger
  ) {
    self.fetcher = fetcher
    self.minRefetchInterval = minRefetchInterval
    self.maxAge = maxAge
    self.logger = logger
  }

  public func key(id: String?, algorithm: JWTAlgorithm) async throws(JWTError) -> JWTKey {
    if let key = find(id, algorithm) {
      let fresh = fetchedAt.map { clock.now - $0 < maxAge } ?? false
      if !fresh { _ = refreshIfAllowed() }
      return key
    }
    await refreshIfAllowed()?.value
    if let key = find(id, algorithm) { return key }
    throw fetchedAt == nil ? .keysUnavailable : .unknownKey(id)
  }

  /// How many keys are held (for tests and the start-up log).
  public var count: Int { keys.count }

  private func find(_ id: String?, _ algorithm: JWTAlgorithm) -> JWTKey? {
    let candidates = keys.filter { $0.algorithm == algorithm }
    guard let id else { return candidates.count == 1 ? candidates[0] : nil }
    return candidates.first { $0.id == id }
  }

  /// The fetch under way, or a new one when the interval allows; nil when it does not.
  private func refreshIfAllowed() -> Task<Void, Never>? {
    if let inFlight { return inFlight }
    let now = clock.now
    if let lastAttempt, now - lastAttempt < minRefetchInterval { return nil }
    lastAttempt = now
    let fetcher = self.fetcher
    let task = Task {
      let result: Result<[UInt8], any Error>
      do { result = .success(try await fetcher.fetch()) } catch { result = .failure(error) }
      self.store(result)
    }
    inFlight = task
    return task
  }

  private func store(_ result: Result<[UInt8], any Error>) {
    inFlight = nil
    switch result {
    case .success(let bytes):
      guard let parsed = JWKSet.keys(from: bytes) else {
        failed("not a key set")
        logger.warning("the JWKS document is not a key set; keeping the keys held")
        return
      }
      keys = parsed
      fetchedAt = clock.now
      fetchedAtMs = Self.nowMs
      failure = nil
      logger.notice("JWKS fetched", ["keys": .int(parsed.count)])
    case .failure(let error):
      failed("\(error)")
      logger.warning(
        "JWKS fetch failed; keeping the keys held",
        ["error": .string("\(error)"), "keys": .int(keys.count)])
    }
  }

  private func failed(_ detail: String) {
    failuresTotal += 1
    var current = failure ?? Health.Failure(detail: detail, sinceMs: Self.nowMs, count: 0)
    current.detail = String(detail.prefix(300))
    current.count += 1
    failure = current
  }

  private static var nowMs: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
