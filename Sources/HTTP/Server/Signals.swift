import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Waiting for termination signals without an async-signal-unsafe handler.
public enum Signals {
  /// Returns the first of `signals` delivered from now on. Where a signal may arrive before
  /// the caller gets here (right after announcing readiness), make a `SignalTrap` first.
  public static func wait(for signals: [Int32]) async -> Int32 {
    await SignalTrap(signals).wait()
  }
}
