import Dispatch
import Postgres
import StorekeeperLogging
import Synchronization

/// Group commit for `POST /v1/orders`: requests that arrive while earlier ones are being
/// written wait together and are written in one statement (one transaction) by the next flush,
/// so the database commits once per batch instead of once per order.
///
/// No request waits for a timer: when fewer than `maxFlushes` flushes are running, a request
/// starts one at once (often of just itself); otherwise it waits for the next flush, which its
/// oldest waiter starts the moment a running one ends, so its wait is bounded by one flush,
/// about what it would have spent on its own commit. A request is answered only after
/// the batch that holds it commits. A batch PostgreSQL rejects is rolled back as a whole and
/// its requests are written again one by one, so one bad order never fails its neighbours; a
/// batch whose outcome is unknown (the connection broke) answers every request with the error,
/// so no client is told of an order that may not exist.
///
/// A request waits for a flush to take it at most `queueTimeout` (`ORDER_QUEUE_TIMEOUT`), and
/// only while its task is not cancelled (its client closed the connection): past either it is
/// taken out of the queue, answered (`queueTimedOut`, a 503; or `CancellationError`), and never
/// written. Once a flush has taken it, its order is in a statement sent to the database and
/// cannot be withdrawn: it waits for that flush's answer, and is written if the flush commits.
package final class OrderGroupCommit: Sendable {
  /// One request's order and, when it sent one, its claimed `Idempotency-Key`.
  package struct Submission: Sendable {
    var order: NewOrder
    var key: String? = nil
    /// The key's claim (`IdempotencyStore.Claim.claimed`): the answer is stored, and the
    /// order kept, only while the key is still this claim's.
    var token: String? = nil

    package init(order: NewOrder, key: String? = nil, token: String? = nil) {
      self.order = order
      self.key = key
      self.token = token
    }
  }

  let database: PostgresPool
  let orders: OrderRepository
  let idempotency: IdempotencyStore
  let ttlSeconds: Int
  let maxOpen: Int
  /// Most requests in one flush (`ORDER_BATCH_MAX`); 1 writes every order on its own.
  let maxBatch: Int
  /// Flushes running at once (`ORDER_BATCH_FLUSHES`), each on its own session.
  let maxFlushes: Int
  /// Longest a request waits for a flush to take it (`ORDER_QUEUE_TIMEOUT`).
  let queueTimeout: Duration
  let logger: Logger
  let state = Mutex(State())
  private let deadlocks = Atomic<Int>(0)
  let queueTimeouts = Atomic<Int>(0)
  private let lastId = Atomic<UInt64>(0)

  /// The answers of a batch written one by one, each stored by the task that wrote it.
  private final class Answers: Sendable {
    private let results: Mutex<[Result<Order, any Error>]>

    init(count: Int) {
      results = Mutex(
        Array(
          repeating: .failure(OrderGroupCommit.Unanswered()),
          count: count))
    }

    func set(_ index: Int, _ result: Result<Order, any Error>) {
      results.withLock { results in
        if results.indices.contains(index) { results[index] = result }
      }
    }

    var all: [Result<Order, any Error>] { results.withLock { $0 } }
  }

  package init(
    database: PostgresPool, orders: OrderRepository, idempotency: IdempotencyStore,
    ttlSeconds: Int, maxOpen: Int, maxBatch: Int = 64, maxFlushes: Int = 2,
    queueTimeout: Duration = .seconds(5), logger: Logger
  ) {
    self.database = database
    self.orders = orders
    self.idempotency = idempotency
    self.ttlSeconds = ttlSeconds
    self.maxOpen = maxOpen
    self.maxBatch = max(1, maxBatch)
    self.maxFlushes = max(1, maxFlushes)
    self.queueTimeout = queueTimeout
    self.logger = logger
  }

  /// The created order once it is committed; throws the refusal (`OrderRefusal`) or the
  /// database's error otherwise.
  ///
  /// Leader and followers: a request that finds a flush slot free leads a flush at once; one
  /// that does not waits, and is woken either with its answer (a leader wrote it) or to lead
  /// the next flush itself, when the leader before it is done; or, still waiting at its
  /// deadline or when its task is cancelled, with its refusal, unwritten.
  package func commit(_ submission: Submission) async throws -> Order {
    if maxBatch == 1 { return try await commitAlone(submission) }
    let id = lastId.wrappingAdd(1, ordering: .relaxed).newValue
    let wakeup = await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Wakeup, Never>) in
        let (answer, sweep) = state.withLock { state -> (Wakeup?, DispatchTime?) in
          if state.flushing < maxFlushes {
            state.flushing += 1
            return (.lead, nil)
          }
          // Its client left before it was queued: the cancellation handler, which ran
          // first, found nothing to withdraw.
          if Task.isCancelled { return (.answered(.failure(CancellationError())), nil) }
          let waiting = Waiting(
            id: id, submission: submission,
            deadline: .now() + Self.interval(queueTimeout), continuation: continuation)
          return (nil, state.wait(waiting))
        }
        if let answer { continuation.resume(returning: answer) }
        // Scheduled outside the lock, as the pool's: a timer is a system call.
        if let sweep { scheduleSweep(at: sweep) }
      }
    } onCancel: {
      withdraw(id, answering: CancellationError())
    }
    switch wakeup {
    case .answered(let result):
      return try result.get()
    case .lead:
      let followers = state.withLock { $0.take(maxBatch - 1) }
      let started = ContinuousClock.now
      // The flush runs in the leader's own task, on its executor (an event loop's, for the
      // route): a task of its own cost a hop to Swift's pool and back on every flush. It
      // holds other requests' orders, so its statements are shielded from the leader's
      // cancellation (`PostgresShieldedPool`): a departing client cannot cut it short.
      let batch = [submission] + followers.map(\.submission)
      let results = await flush(batch)
      let elapsed = ContinuousClock.now - started
      if elapsed >= Self.slowFlush {
        // Every request of the batch, and every one queued behind it, waited this long: say
        // so, since nothing else would (a stalled disk under the WAL's fsync looks like this).
        logger.warning(
          "an order flush was slow; its requests and those queued behind it waited",
          ["orders": .int(results.count), "ms": .int(Self.microseconds(elapsed) / 1000)])
      } else if logger.isEnabled(.debug) {
        // Where an order's time goes: when the commit's WAL flush dominates, a flush costs
        // about the same whatever its size.
        logger.debug(
          "orders flushed",
          ["orders": .int(results.count), "us": .int(Self.microseconds(elapsed))])
      }
      for (follower, result) in zip(followers, results.dropFirst()) {
        follower.continuation.resume(returning: .answered(result))
      }
      let next = state.withLock { state -> Waiting? in
        if state.queue.isEmpty {
          state.flushing -= 1
          return nil
        }
        return state.queue.removeFirst()
      }
      next?.continuation.resume(returning: .lead)
      return try results[0].get()
    }
  }

  /// A flush this long is logged as a warning.
  static let slowFlush = Duration.seconds(1)

  private static func interval(_ duration: Duration) -> DispatchTimeInterval {
    .microseconds(microseconds(duration))
  }

  private static func microseconds(_ duration: Duration) -> Int {
    let parts = duration.components
    return Int(parts.seconds) * 1_000_000 + Int(parts.attoseconds / 1_000_000_000_000)
  }

  /// Writes `batch` and returns one answer per submission, in order.
  /// A batch of one takes the same statement: it is also the cheaper one.
  ///
  /// The orders the batch statement left out are written after it has committed, each on its
  /// own (`commitAlone`). A keyed batch's transaction therefore takes slots in one statement
  /// only, in the global order of `(user_id, slot)`: it never waits for a slot while holding
  /// slots taken by an earlier statement, so two batches cannot wait on each other in a cycle
  /// (decision 0006). Before, its lone retries ran inside the transaction and two keyed
  /// batches of one user could deadlock until PostgreSQL broke it after `deadlock_timeout`.
  func flush(_ batch: [Submission]) async -> [Result<Order, any Error>] {
    let written: [Result<Order, any Error>?]
    do {
      if batch.contains(where: { $0.key != nil }) {
        written = try await database.shielded.withTransaction { tx in
          try await write(batch, on: tx)
        }
      } else {
        written = try await write(batch, on: database.shielded)
      }
    } catch is IdempotencyKeyTakenOver {
      // Rolled back: one of its keys is another request's now. One by one, that order alone
      // is refused.
      return await writeOneByOne(batch)
    } catch let error as PostgresError where error.kind == .server && !error.isUnavailable {
      // Rejected by the server, so rolled back: nothing of the batch exists.
      if error.sqlState == PostgresError.deadlockDetected {
        deadlocks.add(1, ordering: .relaxed)
      }
      logger.warning(
        "an order batch was rejected; writing its orders one by one",
        [
          "orders": .int(batch.count), "sqlstate": .string(error.sqlState ?? ""),
          "error": .string(error.message),
        ])
      return await writeOneByOne(batch)
    } catch {
      return batch.map { _ in .failure(error) }
    }
    var results: [Result<Order, any Error>] = []
    results.reserveCapacity(batch.count)
    for (submission, answer) in zip(batch, written) {
      if let answer {
        results.append(answer)
        continue
      }
      do {
        results.append(.success(try await commitAlone(submission)))
      } catch {
        results.append(.failure(error))
      }
    }
    return results
  }

  /// Batches PostgreSQL rejected as a deadlock's victim since this instance started.
  package var deadlocksBroken: Int { deadlocks.load(ordering: .relaxed) }

  /// Requests answered `queueTimedOut` since this instance started.
  package var queueTimeoutsAnswered: Int { queueTimeouts.load(ordering: .relaxed) }

  /// Every order of a rejected batch in its own statement, at once.
  private func writeOneByOne(_ batch: [Submission]) async -> [Result<Order, any Error>] {
    // Each child stores its own answer at its index; nothing comes back through the task
    // group's results. A release build once returned (Int, Result) pairs from this group
    // with an index past the batch (a trap on the store; with a dictionary, a lost answer),
    // under issue 23's burst of one user's mixed keyed and plain orders.
    let answers = Answers(count: batch.count)
    await withTaskGroup(of: Void.self) { group in
      for (index, submission) in batch.enumerated() {
        group.addTask {
          do {
            answers.set(index, .success(try await self.commitAlone(submission)))
          } catch {
            answers.set(index, .failure(error))
          }
        }
      }
    }
    return answers.all
  }

  /// The batch statement and the answers of its keyed successes, stored in one statement.
  /// nil for each order the statement left out (see `OrderRepository.createBatch`). Throws
  /// only when a statement fails.
  private func write(_ batch: [Submission], on executor: any PostgresExecutor) async throws
    -> [Result<Order, any Error>?]
  {
    let outcomes = try await orders.createBatch(
      batch.map {
        OrderRepository.BatchItem(
          userId: $0.order.userId, productId: $0.order.productId, quantity: $0.order.quantity,
          store: $0.order.store, storefront: $0.order.storefront)
      }, ttlSeconds: ttlSeconds, maxOpen: maxOpen, on: executor)
    var results: [Result<Order, any Error>?] = []
    results.reserveCapacity(batch.count)
    var keyed:
      (users: [String], keys: [String], statuses: [Int32], bodies: [[UInt8]], tokens: [String?]) =
        ([], [], [], [], [])
    for (submission, outcome) in zip(batch, outcomes) {
      guard let outcome else {
        results.append(nil)
        continue
      }
      let result = Result<Order, any Error> {
        try submission.order.created(outcome, maxOpen: maxOpen)
      }
      if case .success(let order) = result, let key = submission.key {
        keyed.users.append(submission.order.userId)
        keyed.keys.append(key)
        keyed.statuses.append(Int32(Self.createdStatus))
        keyed.bodies.append(order.json)
        keyed.tokens.append(submission.token)
      }
      results.append(result)
    }
    if !keyed.keys.isEmpty {
      let stored = try await idempotency.complete(
        userIds: keyed.users, keys: keyed.keys, statuses: keyed.statuses, bodies: keyed.bodies,
        tokens: keyed.tokens, on: executor)
      if stored < keyed.tokens.count(where: { $0 != nil }) { throw IdempotencyKeyTakenOver() }
    }
    return results
  }

  /// One order in its own statement (with its key, in its own transaction): the path every
  /// order took before group commit, and the one a rejected batch falls back to. Shielded
  /// from cancellation like a flush, whose orders these may be.
  func commitAlone(_ submission: Submission) async throws -> Order {
    let database = database.shielded
    let new = submission.order
    guard let key = submission.key else {
      return try new.created(
        try await orders.create(
          userId: new.userId, productId: new.productId, quantity: new.quantity, store: new.store,
          storefront: new.storefront, ttlSeconds: ttlSeconds, maxOpen: maxOpen, on: database),
        maxOpen: maxOpen)
    }
    return try await database.withTransaction { tx in
      let order = try new.created(
        try await orders.create(
          userId: new.userId, productId: new.productId, quantity: new.quantity, store: new.store,
          storefront: new.storefront, ttlSeconds: ttlSeconds, maxOpen: maxOpen, on: tx),
        maxOpen: maxOpen)
      let stored = try await idempotency.complete(
        userId: new.userId, key: key, status: Self.createdStatus, body: order.json,
        token: submission.token, on: tx)
      if submission.token != nil, !stored { throw IdempotencyKeyTakenOver() }
      return order
    }
  }

  /// The status a keyed creation's answer is stored with for replay: the `201` the route
  /// answers a created order with, whose body is `Order.json`.
  package static let createdStatus = 201

  /// The placeholder of an answer a task of the one-by-one fallback never stored.
  struct Unanswered: Error {}
}
