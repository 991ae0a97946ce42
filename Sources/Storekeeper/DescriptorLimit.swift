import Foundation
import StorekeeperLogging

#if canImport(Glibc)
  import Glibc
#endif

/// The process's descriptor limit (`RLIMIT_NOFILE`) against what the configuration needs.
/// Below `MAX_CONNECTIONS`, descriptors run out before the connection cap: the eviction of the
/// longest-idle keep-alive never happens, every new client (Apple's notifications included) is
/// reset, and new database sessions and outbound calls fail too. A shell's default soft limit
/// (1,024) is far below the default cap; only the packaged unit raises it (`LimitNOFILE`).
enum DescriptorLimit {
  struct Limits: Equatable {
    var soft: UInt64
    var hard: UInt64
  }

  /// Descriptors beyond connections and sessions: the event loops' epoll and wake-up
  /// descriptors, libcurl's, the migration and console files, standard streams.
  static let margin = 64

  /// About how many descriptors `config` may hold at once: `MAX_CONNECTIONS` on each listener,
  /// the database sessions (both pools, the catalog listener, the migration session), and the
  /// outbound calls (Apple, Google Play, webhooks) at their caps.
  static func needed(_ config: AppConfig) -> Int {
    let listeners = config.adminPort == nil ? 1 : 2
    return config.maxConnections * listeners + config.databasePoolSize
      + config.databaseReadPoolSize + 2 + config.verifyReceiptConcurrency
      + config.googlePlayConcurrency + config.webhooks.concurrency + margin
  }

  static func current() -> Limits? {
    var limit = rlimit()
    guard getrlimit(resource, &limit) == 0 else { return nil }
    return Limits(soft: UInt64(limit.rlim_cur), hard: UInt64(limit.rlim_max))
  }

  /// Raises the soft limit to the hard one, as Go's runtime and nginx do (an unlimited hard
  /// limit means the kernel's `fs.nr_open`), and returns the limits in force afterwards.
  @discardableResult
  static func raise() -> Limits? {
    guard var limits = current() else { return nil }
    var target = limits.hard
    // RLIM_INFINITY is all ones (a macro Swift cannot import).
    if target == UInt64(rlim_t.max) { target = nrOpen ?? 1_048_576 }
    guard limits.soft < target else { return limits }
    var raised = rlimit(rlim_cur: rlim_t(target), rlim_max: rlim_t(limits.hard))
    if setrlimit(resource, &raised) == 0 { limits.soft = target }
    return limits
  }

  /// Raises the limit and warns, naming `MAX_CONNECTIONS`, when it is still below what
  /// `config` needs. Never fatal: an instance with fewer clients than the cap works.
  static func apply(_ config: AppConfig, logger: Logger) {
    guard let limits = raise() else { return }
    let needed = needed(config)
    guard limits.soft < UInt64(needed) else { return }
    logger.warning(
      "the open-file limit is below what MAX_CONNECTIONS and the pools need: past it new clients are reset instead of idle ones evicted; raise the hard limit (LimitNOFILE=, ulimit -Hn) or lower MAX_CONNECTIONS",
      [
        "setting": .string("MAX_CONNECTIONS"), "limit": .int(Int(clamping: limits.soft)),
        "hard_limit": .int(Int(clamping: limits.hard)), "needed": .int(needed),
        "max_connections": .int(config.maxConnections),
      ])
  }

  private static var nrOpen: UInt64? {
    guard let text = try? String(contentsOfFile: "/proc/sys/fs/nr_open", encoding: .utf8) else {
      return nil
    }
    return UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines))
  }

  #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
  #else
    private static let resource = RLIMIT_NOFILE
  #endif
}
