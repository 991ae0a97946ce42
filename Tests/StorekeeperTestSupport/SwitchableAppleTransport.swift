import AppStore
import Foundation
import Synchronization

/// verifyReceipt answering whatever JSON the test last set: a wrong-secret 21004 until the
/// test "fixes the setting" and switches it to a valid answer.
package final class SwitchableAppleTransport: ReceiptTransport {
  private let answer: Mutex<[String: any Sendable]>

  package init(_ answer: [String: any Sendable]) { self.answer = Mutex(answer) }

  package func set(_ new: [String: any Sendable]) { answer.withLock { $0 = new } }

  package func post(url: URL, body: [UInt8], headers: [String: String], timeout: Duration)
    async throws
    -> (status: Int, body: [UInt8])
  {
    let object = answer.withLock { $0 }
    return (200, [UInt8](try JSONSerialization.data(withJSONObject: object)))
  }
}
