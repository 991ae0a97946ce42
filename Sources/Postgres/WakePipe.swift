#if canImport(Glibc)
  import Glibc
#endif

/// A pipe that lets one thread wake another out of `poll(2)`; owns both descriptors.
///
/// If the pipe cannot be created (descriptor exhaustion), `readDescriptor` is -1 and waiters
/// fall back to a short poll timeout so that `stop()` is still noticed.
final class WakePipe: Sendable {
  let readDescriptor: Int32
  private let writeDescriptor: Int32

  init() {
    var fds: [Int32] = [-1, -1]
    if pipe(&fds) == 0 {
      for fd in fds {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, O_NONBLOCK)
      }
      readDescriptor = fds[0]
      writeDescriptor = fds[1]
    } else {
      readDescriptor = -1
      writeDescriptor = -1
    }
  }

  deinit {
    if readDescriptor >= 0 { close(readDescriptor) }
    if writeDescriptor >= 0 { close(writeDescriptor) }
  }

  var isAvailable: Bool { readDescriptor >= 0 }

  /// Makes the read end readable for good (never drained: a signal means "stop").
  func signal() {
    guard writeDescriptor >= 0 else { return }
    var byte: UInt8 = 1
    _ = write(writeDescriptor, &byte, 1)
  }

  /// Sleeps up to `milliseconds`; returns early (true) once signalled.
  func wait(milliseconds: Int32) -> Bool {
    var descriptor = pollfd(fd: readDescriptor, events: Int16(POLLIN), revents: 0)
    return poll(&descriptor, readDescriptor >= 0 ? 1 : 0, milliseconds) > 0
  }
}
