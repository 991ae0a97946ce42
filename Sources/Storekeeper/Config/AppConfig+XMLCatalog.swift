import StorekeeperCore

/// `XML_PRODUCT_ID_PREFIX`: what seed 000's client puts before each `nid` to make an App Store
/// product id, so the XML answers can give each product's `nid`.
extension AppConfig {
  static func readXMLProductIdPrefix(_ env: [String: String], into config: inout AppConfig)
    throws
  {
    guard let value = env["XML_PRODUCT_ID_PREFIX"], !value.isEmpty else { return }
    // A prefix of a product id: the same characters, and room left for a nid.
    guard StoreIdentifier.isValid(value, maxLength: 99) else {
      throw ConfigError(
        variable: "XML_PRODUCT_ID_PREFIX",
        problem: "must be at most 99 of A-Z, a-z, 0-9, '.', '_' and '-' (e.g. com.example.app.)")
    }
    config.xmlProductIdPrefix = value
  }
}
