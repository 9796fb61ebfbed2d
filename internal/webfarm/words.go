package webfarm

import "strings"

// vocabulary is the word list of the text generator: common English words,
// so that pages look like prose to tokenizers, language detection and
// near-duplicate signatures.
var vocabulary = strings.Fields(`
the of and to in is was for that with as on by at from his her their an be this which or
are have had not but were been one all would there they what so when we can more about
other into some could time these two may then only first new any like over such after also
years most where used between many well made through during even before world under while
national system people state city year government high number part three since later life
work known area water group history public small early large power school country found
called family music center based each place general war same long second house back film
including however series river against main without own four point several local both
development among within county water named around end major company university use south
north following political west land good region population best different field great form
line side community along although form important english today day set few island until
old language game united social village several period west east second road common art
church service often team still again service held season members book show played
government final built village across near being way service around production economic
order law science market research project energy design report office process program
garden harbour valley mountain forest bridge station library museum market theatre gallery
harvest winter summer autumn spring morning evening journey letter story chapter record
signal engine cable network server window garden silver golden amber copper marble granite
meadow orchard lantern compass anchor beacon canyon delta estuary fjord glacier lagoon
plateau prairie savanna tundra volcano archive ledger manual index catalogue almanac atlas
quiet bright gentle rapid steady narrow broad ancient modern northern southern eastern
western careful simple complex common rare open closed early late calm bold clear
describes explains records follows connects measures builds opens carries reaches holds
`)

// topics are the first path segments of ordinary pages. robots.txt rules
// refer to some of them.
var topics = []string{"news", "docs", "blog", "shop", "about", "help", "archive", "private", "people", "events"}
