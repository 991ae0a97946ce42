import AppStore
import Foundation
import Synchronization

/// A stand-in for Apple's verifyReceipt that answers from a closure and records each call.
final class ScriptedTransport: ReceiptTransport {
  private let answer: @Sendable (URL) throws -> (status: Int, body: [UInt8])
  private let log = Mutex<[(url: URL, body: [UInt8])]>([])

  init(_ answer: @escaping @Sendable (URL) throws -> (status: Int, body: [UInt8])) {
    self.answer = answer
  }

  var calls: [(url: URL, body: [UInt8])] { log.withLock { $0 } }

  func post(url: URL, body: [UInt8], headers: [String: String], timeout: Duration) async throws
    -> (status: Int, body: [UInt8])
  {
    log.withLock { $0.append((url, body)) }
    return try answer(url)
  }

  /// An Apple-shaped verifyReceipt body: every value a string, as Apple sends them.
  static func appleAnswer(
    status: Int, environment: String = "Production", bundleId: String = Fixtures.bundleId,
    retryable: Bool? = nil
  ) -> [UInt8] {
    var object: [String: Any] = ["status": status, "environment": environment]
    if let retryable { object["is-retryable"] = retryable }
    if status == 0 {
      object["receipt"] = [
        "bundle_id": bundleId,
        "in_app": [
          [
            "product_id": "gold.100", "transaction_id": "1000000001",
            "original_transaction_id": "1000000001",
            "purchase_date_ms": "1698148900000", "quantity": "3",
            "app_account_token": "6F1E9A3C-2B9D-4E4B-8A77-0C1D2E3F4A5B",
          ],
          [
            "product_id": "vip.monthly", "transaction_id": "1000000002",
            "original_transaction_id": "1000000002",
            "purchase_date_ms": "1698148900000", "expires_date_ms": "1700740900000",
            "web_order_line_item_id": "1000000000000009",
          ],
        ],
      ]
      object["latest_receipt_info"] = [
        [
          "product_id": "vip.monthly", "transaction_id": "1000000002",
          "original_transaction_id": "1000000002",
          "purchase_date_ms": "1698148900000", "expires_date_ms": "1700740900000",
          "cancellation_date_ms": "1699000000000", "cancellation_reason": "1",
        ],
        [
          "product_id": "vip.monthly", "transaction_id": "1000000003",
          "original_transaction_id": "1000000002",
          "purchase_date_ms": "1700740900000", "expires_date_ms": "1703332900000",
          "in_app_ownership_type": "FAMILY_SHARED",
        ],
      ]
      object["latest_receipt"] = "TEFURVNU"
    }
    return [UInt8]((try? JSONSerialization.data(withJSONObject: object)) ?? Data())
  }
}
