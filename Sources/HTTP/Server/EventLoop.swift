import CSystem
import StorekeeperLogging
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// One event-loop thread: an epoll set with a listening socket, an eventfd for wake-ups and
/// the connections the kernel handed to this loop's listener.
///
/// All mutable state except `mailbox` is touched only by the loop's own thread (inside
/// `run()`); other threads talk to the loop only through `post`, hence `@unchecked Sendable`.
final class EventLoop: @unchecked Sendable {
  enum Message {
    /// A handler's response; with a channel when its body is streamed through it.
    case response(fd: Int32, generation: UInt32, Response, StreamChannel?)
    /// A streamed body has pieces (or its end) waiting in its channel.
    case stream(fd: Int32, generation: UInt32)
    case job(UnownedJob)
    case shutdown(deadline: UInt64)
    /// A connection a sibling accepted at the cap with no idle connection of its own to close:
    /// this loop had one (see `EventLoop+Admission`).
    case adopt(fd: Int32, peer: String)
  }

  private struct Mailbox {
    var messages: [Message] = []
    var wakePending = false
    /// False once the loop has stopped: jobs then go to the global executor.
    var open = true
  }

  let shared: ServerShared
  let limits: ParserLimits
  let epoll: Epoll
  let waker: EventFD
  let listener: ListeningSocket
  private let mailbox = Mutex(Mailbox())
  let onExit: @Sendable () -> Void

  var connections: [Connection?] = []
  var connectionCount = 0
  var idle = IdleConnections()
  /// `idle.count`, for sibling loops deciding where a connection at the cap can go.
  let publishedIdleCount = Atomic<Int>(0)
  /// The server's other loops; set before any loop runs, read only after.
  var siblings: [EventLoop] = []
  var nextGeneration: UInt32 = 1
  var deadlines = DeadlineQueue()
  var now: UInt64 = 0
  var dateCache = DateCache()
  var random = FastRandom()
  var shutdownDeadline: UInt64 = 0
  var isShuttingDown: Bool { shutdownDeadline != 0 }
  var running = true
  /// Kept open so that, out of descriptors, the loop can free one to accept-and-close.
  var reserveFD: Int32 = -1
  var acceptPausedUntil: UInt64 = 0

  let readBufferSize = 64 * 1024
  let readBuffer: UnsafeMutableRawBufferPointer
  /// Where a response head is written before it is sent (see `EventLoop+Send`); a head that
  /// does not fit is queued through the connection's own buffer instead.
  let headBuffer: UnsafeMutableRawBufferPointer
  /// The loop's thread, set once when `run()` starts. Other threads read it only in `enqueue`,
  /// for jobs of tasks this loop created after that, so the write happens before every read.
  var thread = pthread_t()
  /// Jobs of handler tasks enqueued from the loop's own thread, run after the current batch.
  var localJobs: [UnownedJob] = []

  /// The epoll token of the loop's own fds (eventfd, listener): generation 0.
  static func token(fd: Int32, generation: UInt32) -> UInt64 {
    UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd))
  }

  init(shared: ServerShared, listener: ListeningSocket, onExit: @escaping @Sendable () -> Void)
    throws(SystemError)
  {
    self.shared = shared
    self.limits = shared.configuration.parserLimits
    self.listener = listener
    self.onExit = onExit
    epoll = try Epoll()
    waker = try EventFD()
    readBuffer = .allocate(byteCount: readBufferSize, alignment: 16)
    headBuffer = .allocate(byteCount: 16 * 1024, alignment: 16)
    try epoll.add(waker.fd, events: Epoll.readable, data: Self.token(fd: waker.fd, generation: 0))
    try epoll.add(
      listener.fd, events: Epoll.readable, data: Self.token(fd: listener.fd, generation: 0))
    reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
  }

  deinit {
    readBuffer.deallocate()
    headBuffer.deallocate()
    if reserveFD >= 0 { close(reserveFD) }
  }

  /// Hands a message to the loop from any thread; wakes it only if no wake-up is pending.
  /// False when the loop has stopped (the message was not taken).
  @discardableResult
  func post(_ message: Message) -> Bool {
    let (taken, wake) = mailbox.withLock { box -> (Bool, Bool) in
      guard box.open else { return (false, false) }
      box.messages.append(message)
      if box.wakePending { return (true, false) }
      box.wakePending = true
      return (true, true)
    }
    if wake { waker.signal() }
    return taken
  }

  var isOnLoopThread: Bool { pthread_equal(pthread_self(), thread) != 0 }

  /// The loop body; returns once shut down and every connection is closed.
  func run(name: String) {
    thread = pthread_self()
    csys_set_thread_name(name)
    now = csys_monotonic_ns()
    while running {
      // Jobs queued outside a batch (by a timer's work) must not wait for the next event.
      let timeout = localJobs.isEmpty ? nextTimeout() : 0
      do {
        try epoll.wait(timeoutMilliseconds: timeout) { events, token in
          self.dispatch(events: events, token: token)
        }
      } catch {
        shared.logger.critical("event loop failed", ["error": .string(error.description)])
        break
      }
      now = csys_monotonic_ns()
      runLocalJobs()
      runTimers()
      if isShuttingDown && (connectionCount == 0 || now >= shutdownDeadline) { running = false }
    }
    closeAll()
    closeMailbox()
    // Loops hold each other; letting go here lets a stopped server's loops be freed.
    siblings = []
    onExit()
  }

  /// After the loop: whatever is still queued runs elsewhere, and so does every later job.
  private func closeMailbox() {
    let left = mailbox.withLock { box in
      box.open = false
      defer { box.messages = [] }
      return box.messages
    }
    for case .job(let job) in left { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    for case .adopt(let fd, _) in left { refuse(fd) }
    for case .response(_, _, _, let channel?) in left { channel.cancel() }
    for job in localJobs { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    localJobs = []
  }

  private func dispatch(events: UInt32, token: UInt64) {
    now = csys_monotonic_ns()
    let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: token))
    let generation = UInt32(truncatingIfNeeded: token >> 32)
    if generation == 0 {
      if fd == waker.fd {
        drainMailbox()
      } else if fd == listener.fd {
        acceptConnections()
      }
      return
    }
    // A stale event for an fd closed earlier in this batch, maybe already reused, is dropped.
    guard let connection = connection(fd: fd, generation: generation) else { return }
    handle(connection, events: events & (connection.interest | Epoll.error | Epoll.hangUp))
  }

  func connection(fd: Int32, generation: UInt32) -> Connection? {
    guard fd >= 0, Int(fd) < connections.count, let c = connections[Int(fd)],
      c.generation == generation
    else { return nil }
    return c
  }

  private func drainMailbox() {
    waker.drain()
    let messages = mailbox.withLock { box in
      box.wakePending = false
      let taken = box.messages
      box.messages.removeAll(keepingCapacity: true)
      return taken
    }
    for message in messages {
      switch message {
      case .response(let fd, let generation, let response, let channel):
        guard let connection = connection(fd: fd, generation: generation),
          connection.phase == .inFlight
        else {
          channel?.cancel()
          continue
        }
        complete(connection, with: response, channel: channel)
        progress(connection)
      case .stream(let fd, let generation):
        guard let connection = connection(fd: fd, generation: generation),
          connection.phase == .streaming
        else { continue }
        progress(connection)
      case .job(let job):
        localJobs.append(job)
      case .shutdown(let deadline):
        beginShutdown(deadline: deadline)
      case .adopt(let fd, let peer):
        adopt(fd: fd, peer: peer)
      }
    }
  }
}
