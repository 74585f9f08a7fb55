// The other side of a trip's bucket list.
import TripStoreEngine

final class BucketListItem: PersistentModel {
    @Attribute var title = ""
    @Relationship var trip: Trip?
    override class var properties: [ModelProperty] {
        [.attribute("title", \BucketListItem.title), .toOne("trip", \BucketListItem.trip, inverse: "bucketList")]
    }
}
