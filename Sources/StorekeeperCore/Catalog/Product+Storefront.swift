extension Product {
  /// What apps see in a storefront: the storefront's price and currency when it has its own.
  package func publicView(at price: StorefrontPrice?) -> PublicView {
    var view = publicView
    if let price {
      view.price = price.price
      view.currency = price.currency
    }
    return view
  }
}
