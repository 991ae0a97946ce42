import CSystem

#if canImport(Glibc)
  import Glibc
#endif

/// A failed system call, named.
struct SystemError: Error, CustomStringConvertible {
  var call: String
  var errno: Int32

  var description: String { "\(call) failed: \(String(cString: strerror(errno))) (\(errno))" }
}

enum IOResult<Value> {
  case done(Value)
  case wouldBlock
}

/// Runs a system call that reports failure as -1: retries EINTR, turns EAGAIN into
/// `.wouldBlock`, and throws anything else with the call's name. EBADF and EFAULT mean the
/// server itself is wrong, so debug builds stop there.
@inline(__always)
func systemCall<T: BinaryInteger>(_ name: @autoclosure () -> String, _ body: () -> T)
  throws(SystemError) -> IOResult<T>
{
  while true {
    let result = body()
    if result >= 0 { return .done(result) }
    let code = csys_errno()
    switch code {
    case EINTR: continue
    case EAGAIN, EWOULDBLOCK: return .wouldBlock
    case EBADF, EFAULT:
      assertionFailure("\(name()) returned \(code): a bug in the server")
      throw SystemError(call: name(), errno: code)
    default:
      throw SystemError(call: name(), errno: code)
    }
  }
}
