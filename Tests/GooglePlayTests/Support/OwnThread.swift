import Foundation

/// Runs `body` on a thread of its own and awaits its result.
///
/// For RSA key generation: a fake Google Play makes two 2048-bit keys and a push-token test a
/// few more, each the better part of a second of CPU on a loaded 2-core machine. Made in an async
/// test, they ran on Swift's global executor, two threads here: a whole-suite run spent 28 s with
/// both in OpenSSL's prime search (`perf`), and every other suite's async work waited, live HTTP
/// servers' handlers among them, until their clients' 30 s timeouts ran out.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    Thread { continuation.resume(with: Result { try body() }) }.start()
  }
}
