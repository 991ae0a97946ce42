import AppAuth
import Synchronization

/// Serves whatever document the test sets, counting fetches; nil means unreachable.
final class FakeJWKSFetcher: JWKSFetching {
  private let state = Mutex<(document: [UInt8]?, fetches: Int)>((nil, 0))

  init(_ document: [UInt8]?) { state.withLock { $0.document = document } }

  func serve(_ document: [UInt8]?) { state.withLock { $0.document = document } }

  var fetches: Int { state.withLock { $0.fetches } }

  func fetch() async throws -> [UInt8] {
    let document = state.withLock { state -> [UInt8]? in
      state.fetches += 1
      return state.document
    }
    guard let document else { throw JWKSFetchError("connection refused") }
    return document
  }
}
