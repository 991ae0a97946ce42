import StorekeeperCore

/// The webhook dispatcher on its loop; on shutdown it also waits for the attempts in flight,
/// so each is recorded.
package struct WebhookService: Service {
  let loop: BackgroundLoop
  let dispatcher: WebhookDispatcher

  package init(loop: BackgroundLoop, dispatcher: WebhookDispatcher) {
    self.loop = loop
    self.dispatcher = dispatcher
  }

  package var name: String { loop.name }

  package func run() async {
    await loop.run()
    await dispatcher.drain()
  }
}
