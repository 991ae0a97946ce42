/// `VoidedPurchasesListResponse`: one page of `purchases.voidedpurchases.list`.
public struct VoidedPurchasesPage: Sendable, Decodable, Equatable {
  public struct TokenPagination: Sendable, Decodable, Equatable {
    public var nextPageToken: String?
    public var previousPageToken: String?
  }

  public struct PageInfo: Sendable, Decodable, Equatable {
    public var resultPerPage: Int32?
    public var startIndex: Int32?
    public var totalResults: Int32?
  }

  /// Absent (not empty) when nothing was voided in the range.
  public var voidedPurchases: [VoidedPurchase]?
  public var tokenPagination: TokenPagination?
  public var pageInfo: PageInfo?

  public var purchases: [VoidedPurchase] { voidedPurchases ?? [] }
  /// Passed as `token` for the next page; nil on the last.
  public var nextPageToken: String? { tokenPagination?.nextPageToken }
}
