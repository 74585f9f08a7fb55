// Included with every fragment: the value of a declaration the fragment
// only needs the type of. These files are type-checked, never run.
import TripStoreEngine

func declared<T>() -> T { fatalError("declared for type-checking only") }
