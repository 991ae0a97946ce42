print("storekeeper")
