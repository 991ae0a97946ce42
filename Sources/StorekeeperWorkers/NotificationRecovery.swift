import AppStore
import Postgres
import StorekeeperCore
import StorekeeperLogging

/// Reads the notifications Apple could not deliver from the App Store Server API's notification
/// history and stores them as if delivered (verified, deduplicated on `notificationUUID`), so a
/// notification is not lost when Apple stops re-sending it (five retries over about six and a
/// half days). Instances take turns through a lease in `notification_recovery`; each pass
/// reads from a little before where the last complete pass ended up to now. One reader per
/// environment, each with its host and its row: Apple sends a sandbox notification once, with
/// no retries, and keeps it in the sandbox host's history only (for 30 days, 180 in
/// production).
package struct NotificationRecovery: Sendable {
  /// The environment read, and its row of `notification_recovery`.
  package enum Environment: Int32, Sendable {
    case production = 1
    case sandbox = 2

    /// How far back Apple answers: 180 days in production, 30 in the sandbox.
    package var oldestMs: Int64 { self == .production ? 179 * 86_400_000 : 29 * 86_400_000 }
    package var name: String { self == .production ? "Production" : "Sandbox" }
  }

  let database: PostgresPool
  let client: NotificationHistoryClient
  let environment: Environment
  let notifications: NotificationService
  let logger: Logger
  /// Wakes the notification worker once something new is stored.
  let wake: @Sendable () -> Void

  package init(
    database: PostgresPool, client: NotificationHistoryClient,
    environment: Environment = .production, notifications: NotificationService,
    logger: Logger, wake: @escaping @Sendable () -> Void
  ) {
    self.database = database
    self.client = client
    self.environment = environment
    self.notifications = notifications
    self.logger = logger
    self.wake = wake
  }

  /// The first pass looks back a week: longer than Apple's retries last.
  static let firstLookbackMs: Int64 = 7 * 86_400_000
  /// Each pass starts this much before the last one ended (clocks differ).
  static let overlapMs: Int64 = 10 * 60_000
  static let leaseSeconds = 600
  static let maxPages = 100

  /// Where a pass reads: a range and, when it goes on from a pass that reached `maxPages`,
  /// Apple's token for the page after the last one read.
  struct Range {
    var from: Int64
    var to: Int64
    var token: String?
  }

  /// How a pass ended.
  enum Ending: Equatable {
    case complete
    /// Stopped at `maxPages`; the next pass goes on with this token.
    case pageLimit(String)
    /// A request failed, or storing did; `resumeAt`: the token of the page to read again
    /// (nil: the range from its start, as after Apple refused a request, a kept token included).
    case failed(String, resumeAt: String?)
  }

  package func runOnce() async {
    let lease: (checkedUntil: Int64?, now: Int64, resume: Range?)
    do {
      guard
        let row = try await database.query(
          """
          UPDATE notification_recovery
          SET lease_until = now() + \(Self.leaseSeconds) * interval '1 second', updated_at = now()
          WHERE id = \(environment.rawValue) AND lease_until < now()
          RETURNING (extract(epoch FROM checked_until) * 1000)::bigint AS checked_until,
                    (extract(epoch FROM now()) * 1000)::bigint AS now, resume_token,
                    (extract(epoch FROM resume_from) * 1000)::bigint AS resume_from,
                    (extract(epoch FROM resume_to) * 1000)::bigint AS resume_to
          """
        ).first
      else { return }  // another instance is reading
      let token: String? = try row.decodeIfPresent("resume_token")
      let from: Int64? = try row.decodeIfPresent("resume_from")
      let to: Int64? = try row.decodeIfPresent("resume_to")
      let resume = token.flatMap { token in
        from.flatMap { from in to.map { Range(from: from, to: $0, token: token) } }
      }
      lease = (try row.decodeIfPresent("checked_until"), try row.decode("now"), resume)
    } catch {
      logger.warning("notification recovery could not start", ["error": .string("\(error)")])
      return
    }
    let range =
      lease.resume
      ?? Range(
        from: max(
          lease.now - environment.oldestMs,
          (lease.checkedUntil ?? lease.now - Self.firstLookbackMs) - Self.overlapMs),
        to: lease.now)
    let (stored, seen, ending) = await read(range)
    var failure: String?
    var next: Range?
    switch ending {
    case .complete: break
    case .pageLimit(let token): next = Range(from: range.from, to: range.to, token: token)
    case .failed(let why, let resumeAt):
      failure = why
      next = resumeAt.map { Range(from: range.from, to: range.to, token: $0) }
    }
    do {
      try await database.execute(
        """
        UPDATE notification_recovery
        SET lease_until = '-infinity', updated_at = now(), last_error = \(failure),
            checked_until = CASE WHEN \(ending == .complete)::boolean
                                 THEN to_timestamp(\(range.to)::bigint / 1000.0)
                                 ELSE checked_until END,
            resume_token = \(next?.token),
            resume_from = to_timestamp(\(next?.from)::bigint / 1000.0),
            resume_to = to_timestamp(\(next?.to)::bigint / 1000.0)
        WHERE id = \(environment.rawValue)
        """)
    } catch {
      logger.warning(
        "notification recovery could not record its pass", ["error": .string("\(error)")])
    }
    if stored > 0 { wake() }
    let fields: [String: LogValue] = [
      "undelivered": .int(seen), "stored": .int(stored), "from_ms": .int(Int(range.from)),
      "to_ms": .int(Int(range.to)), "resumed": .bool(range.token != nil),
      "environment": .string(environment.name),
    ]
    switch ending {
    case .failed(let why, _):
      logger.warning(
        "notification recovery incomplete; the next pass reads the range again",
        fields.merging(["error": .string(why)]) { $1 })
    case .pageLimit:
      logger.notice(
        "notification recovery reached its page limit; the next pass goes on from there",
        fields.merging(["pages": .int(Self.maxPages)]) { $1 })
    case .complete where stored > 0:
      logger.notice("undelivered notifications recovered", fields)
    case .complete:
      logger.info("notification recovery found nothing new", fields)
    }
  }

  /// Stores what the history holds in the range; the count stored, the count seen, and how
  /// the pass ended.
  private func read(_ range: Range) async -> (Int, Int, Ending) {
    var stored = 0
    var seen = 0
    var token = range.token
    for _ in 0..<Self.maxPages {
      let page: NotificationHistoryPage
      switch await client.page(
        startMs: range.from, endMs: range.to, onlyFailures: true, paginationToken: token)
      {
      case .success(let value): page = value
      case .failure(.retryable(let why)): return (stored, seen, .failed(why, resumeAt: token))
      case .failure(.refused(let why)): return (stored, seen, .failed(why, resumeAt: nil))
      }
      for item in page.notificationHistory {
        seen += 1
        do {
          if try await notifications.receive(signedPayload: item.signedPayload) { stored += 1 }
        } catch let refused as NotificationRefusal {
          // Not ours or not genuine: the same refusal a delivery would have had.
          logger.warning("recovered notification refused", ["detail": .string(refused.detail)])
        } catch {
          return (
            stored, seen,
            .failed("storing a recovered notification failed: \(error)", resumeAt: token)
          )
        }
      }
      guard page.hasMore, let next = page.paginationToken else { return (stored, seen, .complete) }
      token = next
    }
    return (stored, seen, token.map { .pageLimit($0) } ?? .complete)
  }
}
