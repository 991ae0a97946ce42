import AppAuth
import Synchronization

/// Serves whatever document the test sets, counting fetches; nil means unreachable.
final class FakeJWKSFetcher: JWKSFetching {
  private let state = Mutex<(document: [UInt8]?, fetches: Int)>((nil, 0))

  /// How long each fetch takes, so that callers can arrive while one is under way.
  let delay: Duration

  init(_ document: [UInt8]?, delay: Duration = .zero) {
    self.delay = delay
    state.withLock { $0.document = document }
  }

  func serve(_ document: [UInt8]?) { state.withLock { $0.document = document } }

  var fetches: Int { state.withLock { $0.fetches } }

  func fetch() async throws -> [UInt8] {
    let document = state.withLock { state -> [UInt8]? in
      state.fetches += 1
      return state.document
    }
    if delay > .zero { try? await Task.sleep(for: delay) }
    guard let document else { throw JWKSFetchError("connection refused") }
    return document
  }
}
