import AppStore
import Foundation
import StorekeeperLogging
import Synchronization

/// Sends notifications as Apple does: one attempt at once and, when the receiver does not
/// accept a production notification (no answer, or a status outside 200–206), one retry after
/// each delay of the schedule, counted from the previous attempt (Apple: 1, 12, 24, 48 and 72
/// hours). Sandbox notifications are attempted once. Every attempt is kept for `record(of:)`.
final class FakeNotificationOutbox: Sendable {
  struct Record: Sendable {
    var notificationType: String
    var subtype: String?
    var bundleId: String
    /// Production or Sandbox: each host's notification history holds its own.
    var environment: String
    var signedPayload: String
    /// When it was first sent, in milliseconds: what the notification history filters on.
    var firstSent: Int64
    var attempts: [FakeSendAttempt] = []
    /// Retries still to come: 0 once accepted, given up, or never retried.
    var retriesLeft: Int
  }

  private struct State {
    var records: [String: Record] = [:]
    var retries: [String: Task<Void, Never>] = [:]
    var closed = false
  }

  private let state = Mutex(State())
  private let delivery: FakeNotificationDelivery
  private let schedule: [Duration]
  private let logger: Logger

  init(delivery: FakeNotificationDelivery, schedule: [Duration], logger: Logger) {
    self.delivery = delivery
    self.schedule = schedule
    self.logger = logger
  }

  /// Attempts delivery now and, unless it succeeds, schedules the retries; returns the first
  /// attempt's outcome.
  func send(
    _ signed: FakeNotificationSigner.Signed, type: String, subtype: String?,
    subject: FakeNotificationSigner.Subject, to url: URL
  ) async -> FakeNotificationDelivery.Outcome {
    let uuid = signed.notificationUUID
    let retries = subject.environment == AppStoreEnvironment.production.rawValue ? schedule : []
    state.withLock {
      $0.records[uuid] = Record(
        notificationType: type, subtype: subtype, bundleId: subject.bundleId,
        environment: subject.environment, signedPayload: signed.signedPayload,
        firstSent: FakeAppStoreEndpoints.now(),
        retriesLeft: retries.count)
    }
    let first = await attempt(uuid, signed.signedPayload, to: url, retriesLeft: retries.count)
    guard !first.succeeded, !retries.isEmpty else {
      state.withLock { $0.records[uuid]?.retriesLeft = 0 }
      return first
    }
    let task = Task { [weak self] in
      for (index, delay) in retries.enumerated() {
        try? await Task.sleep(for: delay)
        guard !Task.isCancelled, let self else { return }
        let left = retries.count - index - 1
        let outcome = await self.attempt(uuid, signed.signedPayload, to: url, retriesLeft: left)
        if outcome.succeeded { break }
      }
      self?.finish(uuid)
    }
    let cancel = state.withLock { state -> Bool in
      // Already finished (only with a zero delay) or shutting down: nothing to keep.
      guard !state.closed, state.records[uuid]?.retriesLeft ?? 0 > 0 else { return state.closed }
      state.retries[uuid] = task
      return false
    }
    if cancel { task.cancel() }
    return first
  }

  /// What happened to a notification sent through this outbox so far.
  func record(of notificationUUID: String) -> Record? {
    state.withLock { $0.records[notificationUUID] }
  }

  /// The app's notifications first sent in [startMs, endMs), oldest first; with
  /// `onlyFailures`, those no attempt delivered.
  func history(
    bundleId: String, environment: String, startMs: Int64, endMs: Int64, onlyFailures: Bool
  ) -> [Record] {
    state.withLock { state in
      state.records.values.filter { record in
        record.bundleId == bundleId && record.environment == environment
          && record.firstSent >= startMs && record.firstSent < endMs
          && !(onlyFailures && record.attempts.contains { $0.sendAttemptResult == .success })
      }
    }.sorted { ($0.firstSent, $0.signedPayload) < ($1.firstSent, $1.signedPayload) }
  }

  /// Stops every retry still to come (at shutdown).
  func close() {
    let tasks = state.withLock { state in
      state.closed = true
      defer { state.retries = [:] }
      return Array(state.retries.values)
    }
    for task in tasks { task.cancel() }
  }

  private func attempt(_ uuid: String, _ payload: String, to url: URL, retriesLeft: Int) async
    -> FakeNotificationDelivery.Outcome
  {
    let outcome = await delivery.deliver(payload, to: url)
    let attempt = FakeSendAttempt(
      attemptDate: FakeAppStoreEndpoints.now(), sendAttemptResult: outcome.result,
      status: outcome.status)
    let number = state.withLock { state -> Int in
      state.records[uuid]?.attempts.append(attempt)
      state.records[uuid]?.retriesLeft = outcome.succeeded ? 0 : retriesLeft
      return state.records[uuid]?.attempts.count ?? 0
    }
    logger.info(
      "notification delivery attempt",
      [
        "notification_uuid": .string(uuid), "attempt": .int(number),
        "send_attempt_result": .string(outcome.result.rawValue),
        "status": outcome.status.map { .int($0) } ?? .string("none"),
        "retries_left": .int(outcome.succeeded ? 0 : retriesLeft),
      ])
    return outcome
  }

  private func finish(_ uuid: String) {
    state.withLock { state in
      state.records[uuid]?.retriesLeft = 0
      state.retries[uuid] = nil
    }
  }
}
