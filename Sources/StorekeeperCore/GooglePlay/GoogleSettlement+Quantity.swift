/// The quantity a Google Play purchase pays for. With Play Billing the user picks it in
/// Google's purchase screen, after the app made the order (`BillingFlowParams` has no quantity
/// to set), so the purchase's quantity is the truth: the order is resized to it in the
/// statement that pays it (`quantity`, and `amount` at the order's unit price). The App Store's
/// rule is not this one: there the app sets the quantity, and a mismatch is refused.
extension GoogleSettlement {
  /// The quantity `order` is resized to before `purchase` pays it; nil when it already holds
  /// it. An order holds 1 to 10 units, and more than one only of a consumable (0002): a
  /// purchase past that is refused, though Google charged for it (`GooglePlayMonitor` alerts).
  static func resizedQuantity(_ order: Order, to purchase: GooglePurchase, product: Product)
    throws(SettlementRefusal) -> Int32?
  {
    guard purchase.quantity != order.quantity else { return nil }
    guard product.type == .consumable, (1...maxQuantity).contains(purchase.quantity) else {
      throw .quantityMismatch(charged: Int(purchase.quantity), ordered: order.quantity)
    }
    return purchase.quantity
  }

  /// The most units an order holds (`orders.quantity`'s check, 0002).
  static let maxQuantity: Int32 = 10

  /// Tells the operator of a purchase Google charged for that no order may hold: it is never
  /// credited, and Google refunds it after three days.
  func alertIfUncreditable(_ error: any Error, _ purchase: GooglePurchase, tradeNo: String?) {
    guard case SettlementRefusal.quantityMismatch(let charged, _) = error,
      charged > Int(Self.maxQuantity)
    else { return }
    verifier.monitor.uncreditable(
      orderId: purchase.orderId, quantity: charged, tradeNo: tradeNo)
  }
}
