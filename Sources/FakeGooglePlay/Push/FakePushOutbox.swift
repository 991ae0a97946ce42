import Foundation
import JOSE
import OutboundHTTP
import StorekeeperLogging
import Synchronization

/// Pushes developer notifications as a Pub/Sub push subscription does: POSTs the message
/// envelope with an OIDC token to the push endpoint, and until it answers 2xx (102 too, as
/// Pub/Sub counts it) retries with exponential backoff between `minBackoff` and `maxBackoff`,
/// giving up once `retention` has passed since the message was published (Pub/Sub: 7 days).
/// A test may withhold the next messages (`withhold`): they are recorded but never pushed, as a
/// push lost for good (an endpoint down past the retention, a subscription misconfigured), until
/// `release` pushes one late.
final class FakePushOutbox: Sendable {
  struct Settings: Sendable {
    var url: URL?
    var audience: String?
    var email: String
    var subscription: String
    var minBackoff: Duration
    var maxBackoff: Duration
    var retention: Duration
  }

  struct Record: Sendable {
    var messageId: String
    var data: [UInt8]
    var publishTime: String
    var attempts: [Int?] = []
    var delivered = false
    var gaveUp = false
    /// Recorded but not pushed (until released).
    var withheld = false
  }

  private struct State {
    var records: [String: Record] = [:]
    var order: [String] = []
    var tasks: [String: Task<Void, Never>] = [:]
    var counter = 0
    var closed = false
    /// How many of the next messages to withhold.
    var withholding = 0
  }

  let settings: Settings
  private let signer: FakeOIDCSigner
  private let logger: Logger
  private let session = OutboundHTTPSession(maxBody: 64 << 10)
  private let state = Mutex(State())

  init(settings: Settings, signer: FakeOIDCSigner, logger: Logger) {
    self.settings = settings
    self.signer = signer
    self.logger = logger
  }

  /// Publishes `notification` (the developer notification's JSON) and starts delivering it;
  /// returns the message id. With no push URL configured it is only recorded.
  @discardableResult
  func publish(_ notification: [String: Any]) -> String {
    let data =
      (try? JSONSerialization.data(withJSONObject: notification, options: [.sortedKeys]))
      .map { [UInt8]($0) } ?? []
    let (messageId, held) = state.withLock { state -> (String, Bool) in
      state.counter += 1
      let id = String(17_000_000_000_000 + state.counter)
      let withheld = state.withholding > 0
      if withheld { state.withholding -= 1 }
      state.records[id] = Record(
        messageId: id, data: data,
        publishTime: FakeSubscription.time(FakePlayState.realMillis()), withheld: withheld)
      state.order.append(id)
      return (id, withheld)
    }
    if !held { startDelivery(messageId) }
    return messageId
  }

  /// Withholds the next `count` messages published; returns how many are still to withhold.
  func withhold(_ count: Int) -> Int {
    state.withLock { state in
      state.withholding += count
      return state.withholding
    }
  }

  /// What `release` found.
  enum Release {
    case released, unknown, notWithheld
  }

  /// Pushes a withheld message now, as a late delivery.
  func release(_ messageId: String) -> Release {
    let found = state.withLock { state -> Release in
      guard let record = state.records[messageId] else { return .unknown }
      guard record.withheld else { return .notWithheld }
      state.records[messageId]?.withheld = false
      return .released
    }
    if found == .released { startDelivery(messageId) }
    return found
  }

  private func startDelivery(_ messageId: String) {
    guard let url = settings.url, !state.withLock({ $0.closed }) else { return }
    let task = Task { [weak self] in
      guard let self else { return }
      await self.deliver(messageId, to: url)
    }
    state.withLock { $0.tasks[messageId] = task }
  }

  var records: [Record] {
    state.withLock { state in state.order.compactMap { state.records[$0] } }
  }

  func close() {
    let tasks = state.withLock { state in
      state.closed = true
      defer { state.tasks = [:] }
      return Array(state.tasks.values)
    }
    for task in tasks { task.cancel() }
  }

  private func deliver(_ messageId: String, to url: URL) async {
    let clock = ContinuousClock()
    let giveUpAt = clock.now + settings.retention
    var backoff = settings.minBackoff
    while !Task.isCancelled {
      let status = await attempt(messageId, to: url)
      let delivered = status.map { (200...299).contains($0) || $0 == 102 } ?? false
      let done = state.withLock { state -> Bool in
        state.records[messageId]?.attempts.append(status)
        if delivered { state.records[messageId]?.delivered = true }
        return delivered
      }
      logger.info(
        "push attempt",
        [
          "message_id": .string(messageId),
          "status": status.map { .int($0) } ?? .string("none"),
        ])
      if done { break }
      guard clock.now + backoff < giveUpAt else {
        state.withLock { $0.records[messageId]?.gaveUp = true }
        break
      }
      try? await Task.sleep(for: backoff)
      backoff = min(backoff * 2, settings.maxBackoff)
    }
    _ = state.withLock { $0.tasks.removeValue(forKey: messageId) }
  }

  private func attempt(_ messageId: String, to url: URL) async -> Int? {
    guard let record = state.withLock({ $0.records[messageId] }),
      let token = try? signer.token(
        audience: settings.audience ?? url.absoluteString, email: settings.email)
    else { return nil }
    let data = Data(record.data).base64EncodedString()
    let envelope: [String: Any] = [
      "message": [
        "attributes": [String: String](), "data": data, "messageId": messageId,
        "message_id": messageId, "publishTime": record.publishTime,
        "publish_time": record.publishTime,
      ] as [String: Any],
      "subscription": settings.subscription,
    ]
    guard
      let body = try? JSONSerialization.data(withJSONObject: envelope, options: [.sortedKeys])
    else { return nil }
    let answer = try? await session.post(
      url: url, body: [UInt8](body),
      headers: [("Content-Type", "application/json"), ("Authorization", "Bearer " + token)],
      timeout: .seconds(10))
    return answer?.status
  }
}
