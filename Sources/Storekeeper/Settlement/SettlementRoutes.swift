import HTTP

/// After the purchase: reports about orders, and receipts without one.
struct SettlementRoutes: Sendable {
  let reports: TradeReportService
  let receipts: ReceiptService

  func register(_ router: inout APIRouter) {
    router.add(.post, "/v1/trade-reports") { request, context in
      try await reports.handle(request, context)
    }
    router.add(.post, "/v1/receipts") { request, context in
      try await receipts.handle(request, context)
    }
  }
}
