/// The size limits the parser enforces; the server fills them from `ServerConfiguration`.
public struct ParserLimits: Sendable {
  public var maxHeadBytes: Int
  public var maxHeaderCount: Int
  public var maxTargetBytes: Int
  public var maxBodyBytes: Int
  /// Not a limit: names the parser shares rather than allocates (`SharedFieldNames`).
  public var sharedFieldNames = SharedFieldNames()

  public init(
    maxHeadBytes: Int = 16 * 1024, maxHeaderCount: Int = 100, maxTargetBytes: Int = 8 * 1024,
    maxBodyBytes: Int = 1024 * 1024
  ) {
    self.maxHeadBytes = maxHeadBytes
    self.maxHeaderCount = maxHeaderCount
    self.maxTargetBytes = maxTargetBytes
    self.maxBodyBytes = maxBodyBytes
  }
}
