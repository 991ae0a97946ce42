import AppStore
import Postgres

/// The durable side of answering Apple's consumption requests: the job each request becomes,
/// the consent users give, the claim a worker takes on due jobs (any instance; a claim is a
/// lease, `next_attempt_at` pushed forward, so a crashed worker's job is taken up again), and
/// what each attempt ended in, with its `consumption.answered` event.
package struct ConsumptionAnswers: Sendable {
  let database: PostgresPool
  let outbox: EventOutbox

  package init(database: PostgresPool, outbox: EventOutbox) {
    self.database = database
    self.outbox = outbox
  }

  /// Apple's window for an answer.
  static let windowMs: Int64 = 12 * 3_600_000
  /// How long a claimed job is left to its worker before another may take it.
  static let leaseSeconds = 120

  /// Records a request as a job, once per notification, in the notification's transaction.
  static func enqueue(
    notificationUuid: String, transactionId: String, environment: String, signedDateMs: Int64?,
    nowMs: Int64, on tx: PostgresTransaction
  ) async throws {
    let deadlineMs = (signedDateMs ?? nowMs) + windowMs
    try await tx.execute(
      """
      INSERT INTO consumption_answers (notification_uuid, transaction_id, environment, deadline)
      VALUES (\(notificationUuid), \(transactionId), \(environment),
              to_timestamp(\(deadlineMs)::bigint / 1000.0))
      ON CONFLICT (notification_uuid) DO NOTHING
      """)
  }

  // MARK: consent

  package struct Consent: Encodable, Sendable {
    var userId: String
    package var consented: Bool
    var updatedAt: String?

    enum CodingKeys: String, CodingKey {
      case userId = "user_id"
      case consented
      case updatedAt = "updated_at"
    }
  }

  package func setConsent(userId: String, consented: Bool, caller: String) async throws -> Consent {
    let row = try await database.queryFirst(
      """
      INSERT INTO consumption_consents (user_id, consented, caller) VALUES (\(userId), \(consented), \(caller))
      ON CONFLICT (user_id) DO UPDATE
        SET consented = EXCLUDED.consented, caller = EXCLUDED.caller, updated_at = now()
      RETURNING \(unescaped: SQLTime.rfc3339("updated_at"))
      """)
    return Consent(userId: userId, consented: consented, updatedAt: try row?.decode("updated_at"))
  }

  package func consent(userId: String) async throws -> Consent {
    let row = try await database.queryFirst(
      """
      SELECT consented, \(unescaped: SQLTime.rfc3339("updated_at")) FROM consumption_consents
      WHERE user_id = \(userId)
      """)
    return Consent(
      userId: userId, consented: try row?.decode("consented") ?? false,
      updatedAt: try row?.decodeIfPresent("updated_at"))
  }

  // MARK: the worker's side

  /// Up to `limit` due jobs, each leased to the caller.
  package func claim(limit: Int = 20) async throws -> [ConsumptionAnswer] {
    try await database.query(
      """
      UPDATE consumption_answers c
      SET next_attempt_at = now() + \(Self.leaseSeconds) * interval '1 second',
          attempts = c.attempts + 1
      WHERE c.notification_uuid = ANY (ARRAY(
        SELECT notification_uuid FROM consumption_answers
        WHERE state = \(ConsumptionAnswer.State.pending) AND next_attempt_at <= now()
        ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED))
      RETURNING \(unescaped: ConsumptionAnswer.columns)
      """
    ).map(ConsumptionAnswer.init(row:))
  }

  /// Whether the job's window has closed (read from the database's clock).
  package func expired(_ job: ConsumptionAnswer) async throws -> Bool {
    let row = try await database.queryFirst(
      """
      SELECT deadline <= now() AS expired FROM consumption_answers
      WHERE notification_uuid = \(job.notificationUuid)
      """)
    return try row?.decode("expired") ?? true
  }

  /// The answer the ledger and `policy` make for `job`, or nil with the reason none may be
  /// sent (no consent: Apple refuses an answer without it).
  package func compose(_ job: ConsumptionAnswer, policy: ConsumptionPolicy) async throws
    -> (information: ConsumptionInformation?, userId: String?, reason: String?)
  {
    let facts = try await ConsumptionFacts.load(transactionId: job.transactionId, on: database)
    guard facts.userId != nil else { return (nil, nil, "no_user") }
    guard facts.consented else { return (nil, facts.userId, "no_consent") }
    let milliunits = facts.milliunits
    let information = ConsumptionInformation(
      customerConsented: true, deliveryStatus: facts.delivered ? .delivered : .undeliveredOther,
      consumptionPercentage: milliunits,
      refundPreference: policy.preference(
        milliunits: milliunits, subscription: facts.productType == .autoRenewable),
      sampleContentProvided: policy.sampleContentProvided)
    return (information, facts.userId, nil)
  }

  /// Records what an attempt ended in. `retryAt` (seconds from now) leaves the job pending;
  /// otherwise it ends in `state`, and its event is written for the user. Only the attempt
  /// that holds the job records it: one whose lease ran out while Apple was slow (another
  /// instance claimed the job again, counting another attempt) changes nothing, so a `sent`
  /// job is not turned `failed` nor its event written twice.
  package func record(
    _ job: ConsumptionAnswer, state: ConsumptionAnswer.State,
    information: ConsumptionInformation?, userId: String?, outcome: String?, error: String?,
    retryAfterSeconds: Int? = nil
  ) async throws {
    let answer = try information.map { try JSONCoding.text(Self.json($0)) }
    try await database.withTransaction { tx in
      if let retryAfterSeconds {
        try await tx.execute(
          """
          UPDATE consumption_answers
          SET next_attempt_at = now() + \(retryAfterSeconds) * interval '1 second',
              last_error = \(error), user_id = \(userId), answer = \(answer)::jsonb
          WHERE notification_uuid = \(job.notificationUuid)
            AND state = \(ConsumptionAnswer.State.pending) AND attempts = \(job.attempts)
          """)
        return
      }
      let ended = try await tx.query(
        """
        UPDATE consumption_answers
        SET state = \(state), outcome = \(outcome), last_error = \(error), user_id = \(userId),
            answer = \(answer)::jsonb, answered_at = now()
        WHERE notification_uuid = \(job.notificationUuid)
          AND state = \(ConsumptionAnswer.State.pending) AND attempts = \(job.attempts)
        RETURNING 1
        """)
      guard !ended.isEmpty, let userId else { return }
      var data: [String: JSONValue] = [
        "notification_uuid": .string(job.notificationUuid),
        "transaction_id": .string(job.transactionId), "state": .string(state.rawValue),
        "attempts": .number(String(job.attempts)),
      ]
      if let outcome { data["outcome"] = .string(outcome) }
      if let information { data["answer"] = Self.json(information) }
      try await outbox.append([EventDraft(.consumptionAnswered, data)], for: userId, on: tx)
    }
  }

  static func json(_ information: ConsumptionInformation) -> JSONValue {
    var object: [String: JSONValue] = [
      "customerConsented": .bool(information.customerConsented),
      "deliveryStatus": .string(information.deliveryStatus.rawValue),
      "sampleContentProvided": .bool(information.sampleContentProvided),
    ]
    if let share = information.consumptionPercentage {
      object["consumptionPercentage"] = .number(String(share))
    }
    if let preference = information.refundPreference {
      object["refundPreference"] = .string(preference.rawValue)
    }
    return .object(object)
  }
}
