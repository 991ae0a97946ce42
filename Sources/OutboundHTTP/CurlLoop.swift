import CCurl
import Foundation
import Synchronization

/// Every outbound request of the process, run by libcurl's multi interface on one thread of its
/// own. URLSession on Linux drives libcurl through Dispatch socket sources and can crash the
/// process when a connection is refused or times out (swift-corelibs-foundation #4791, #5469):
/// a webhook receiver that is down must never do that. Here libcurl owns its sockets and
/// polls them itself; other threads only queue work and wake the loop.
final class CurlLoop: Sendable {
  static let shared = CurlLoop()

  private enum Command {
    case add(CurlTransfer)
    case cancel(CurlTransfer)
  }

  private let multi: CurlMulti
  private let commands = Mutex<[Command]>([])

  private init() {
    curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    multi = CurlMulti()
    let thread = Thread { [self] in self.run() }
    thread.name = "storekeeper-outbound"
    thread.start()
  }

  func add(_ transfer: CurlTransfer) { send(.add(transfer)) }

  func cancel(_ transfer: CurlTransfer) { send(.cancel(transfer)) }

  private func send(_ command: Command) {
    commands.withLock { $0.append(command) }
    curl_multi_wakeup(multi.handle)
  }

  /// The loop: take queued commands, let libcurl move every transfer on, resume the callers of
  /// those that finished, and sleep in libcurl's poll until a socket, a timer or a wakeup.
  private func run() {
    var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    while true {
      let queued = commands.withLock { queued in
        defer { queued = [] }
        return queued
      }
      for command in queued {
        switch command {
        case .add(let transfer):
          // Cancelled between queueing and now: its caller has had its answer.
          guard transfer.isWaiting else { continue }
          if curl_multi_add_handle(multi.handle, transfer.handle) == CURLM_OK {
            running[transfer.handle] = transfer
          } else {
            transfer.resume(.failure(OutboundHTTPError.failed(CurlError(code: CURLE_FAILED_INIT))))
          }
        case .cancel(let transfer):
          if running.removeValue(forKey: transfer.handle) != nil {
            curl_multi_remove_handle(multi.handle, transfer.handle)
          }
          transfer.resume(.failure(CancellationError() as any Error))
        }
      }
      var active: Int32 = 0
      curl_multi_perform(multi.handle, &active)
      var left: Int32 = 0
      while let message = curl_multi_info_read(multi.handle, &left) {
        guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
          let transfer = running.removeValue(forKey: easy)
        else { continue }
        let code = message.pointee.data.result
        curl_multi_remove_handle(multi.handle, easy)
        transfer.resume(transfer.outcome(code))
      }
      curl_multi_poll(multi.handle, nil, 0, 1000, nil)
    }
  }
}
