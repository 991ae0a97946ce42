import StorekeeperLogging

/// Google's push-token keys, cached. Fetched on first use, again when a token names a `kid`
/// not held (Google rotates its keys every few days) or when older than `maxAge` — but never
/// more often than `minRefetchInterval`, so tokens with made-up ids cannot make this server
/// hammer Google. One fetch at a time; a failed one keeps the last good keys, and with none
/// nothing verifies.
public actor PushKeySource {
  private let fetcher: any PushKeyFetching
  private let minRefetchInterval: Duration
  private let maxAge: Duration
  private let logger: Logger
  private let clock = ContinuousClock()
  private var keys: [String: RSAPublicKey] = [:]
  private var fetchedAt: ContinuousClock.Instant?
  private var lastAttempt: ContinuousClock.Instant?
  private var inFlight: Task<Result<[UInt8], any Error>, Never>?
  /// Fetches started (for tests and metrics).
  public private(set) var fetchCount = 0

  public init(
    fetcher: any PushKeyFetching, minRefetchInterval: Duration = .seconds(30),
    maxAge: Duration = .seconds(3600), logger: Logger
  ) {
    self.fetcher = fetcher
    self.minRefetchInterval = minRefetchInterval
    self.maxAge = maxAge
    self.logger = logger
  }

  func key(id: String) async throws(PushTokenRefusal) -> RSAPublicKey {
    let fresh = fetchedAt.map { clock.now - $0 < maxAge } ?? false
    if fresh, let key = keys[id] { return key }
    await refreshIfAllowed()
    if let key = keys[id] { return key }
    throw fetchedAt == nil ? .keysUnavailable : .unknownKey(id)
  }

  /// How many keys are held.
  public var count: Int { keys.count }

  private func refreshIfAllowed() async {
    if let inFlight {
      _ = await inFlight.value
      return
    }
    let now = clock.now
    if let lastAttempt, now - lastAttempt < minRefetchInterval { return }
    lastAttempt = now
    fetchCount += 1
    let fetcher = self.fetcher
    let task = Task { () -> Result<[UInt8], any Error> in
      do { return .success(try await fetcher.fetch()) } catch { return .failure(error) }
    }
    inFlight = task
    let result = await task.value
    inFlight = nil
    switch result {
    case .success(let bytes):
      guard let parsed = GoogleKeySet.keys(from: bytes) else {
        logger.warning("the push JWKS document is not a key set; keeping the keys held")
        return
      }
      keys = parsed
      fetchedAt = clock.now
      logger.info("push JWKS fetched", ["keys": .int(parsed.count)])
    case .failure(let error):
      logger.warning(
        "push JWKS fetch failed; keeping the keys held",
        ["error": .string("\(error)"), "keys": .int(keys.count)])
    }
  }
}
