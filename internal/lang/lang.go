// Package lang guesses the language of a text from its most common words:
// each language has a profile of frequent function words (articles,
// pronouns, prepositions, auxiliaries), and the language whose profile
// covers most of the text's words wins. It is the detector of the focused
// crawl (MS-FSCCFG 2.2.4.19, focused/languages), which names languages by
// their ISO 639-1 codes.
//
// The profiles are short lists written for this package, not trained
// models: they tell the western European languages of a typical enterprise
// web apart on a paragraph of running text, and say "unknown" when too few
// words are in any profile (a list of names, a table of numbers).
package lang

import (
	"strings"
	"unicode"
)

// profiles are the function words of each language, by ISO 639-1 code.
// A word in several profiles counts for each, weighted down (Detect).
var profiles = map[string]string{
	"en": "the of and to in is that it was for on are with as his they be at one have this from or had by not but what some we can out other were all there when up use your how said an each she which do their time if will way about many then them would write like so these her see him has two more day could go come did my no most who over know than call first people may down been now find any new also after",
	"de": "der die und in den von zu das mit sich des auf für ist im dem nicht ein eine als auch es an werden aus er hat dass sie nach wird bei einer um am sind noch wie einem über einen so zum war haben nur oder aber vor zur bis mehr durch man sein wurde sei ich wir ihr uns kann können diese dieser schon wenn",
	"fr": "le la les de des du et un une en est que qui dans pour pas sur au aux ce cette il elle ils nous vous avec par plus ne se sont mais ou son sa ses leur été être avoir fait comme tout très aussi bien sans peut entre où donc alors même deux après avant chez",
	"no": "og i det som på er en til å ikke av for med han jeg har de var den et men om seg vi kan skal hun så ble fra sin eller etter bare også når hadde vil dette denne ut noe mange mot da meg hvor ved være blir vært kunne alle hva mer inn slik ham deres våre",
	"sv": "och i att det som en på är av för med till den inte har de ett om var jag men så sig från vi kan man när hade nu under också efter eller skulle vid mot ska bara blir detta sin dem mycket kommer hon där vara någon får än alla ut hur mig inom utan",
	"da": "og i at det som en på er af for med til den ikke har de et om var jeg men så sig fra vi kan man når havde nu under også efter eller skulle ved mod skal bare bliver dette sin dem meget kommer hun der være nogen får end alle ud hvordan mig uden hvad",
	"nl": "de het een en van in is dat op te zijn met voor niet aan er om ook als bij door maar uit dan nog wel naar kan worden heeft tot zo hij zij ze wat wordt was deze dit onder meer geen al over hun ons jullie wij omdat want",
	"es": "el la los las de del y en un una que es por con para se no lo su sus al como más pero o este esta son fue ha ser está muy también entre sin sobre todo cuando donde nos porque hay desde hasta le les mi ya",
	"it": "il lo la i gli le di del della e in un una che è per con non si da al alla sono come più ma o questo questa anche ha essere stato molto tra senza sopra tutto quando dove ci perché se nel nella dei delle suo sua",
	"pt": "o a os as de do da dos das e em um uma que é por com para se não no na ao como mais mas ou este esta são foi ser está muito também entre sem sobre tudo quando onde nos porque há desde até lhe seu sua",
}

// Detector scores texts against the language profiles.
type Detector struct {
	words map[string][]string // word -> languages whose profile has it
	// MinWords is the least number of profile words a text needs for an
	// answer (default 5).
	MinWords int
	// MinShare is the least share of the text's words the winner's profile
	// must cover (default 0.08).
	MinShare float64
}

// New returns a detector over the built-in profiles.
func New() *Detector {
	d := &Detector{words: map[string][]string{}, MinWords: 5, MinShare: 0.08}
	for code, list := range profiles {
		for _, w := range strings.Fields(list) {
			d.words[w] = append(d.words[w], code)
		}
	}
	return d
}

// Languages lists the codes the detector knows.
func Languages() []string {
	out := make([]string, 0, len(profiles))
	for c := range profiles {
		out = append(out, c)
	}
	return out
}

// Canonical maps an ISO 639-1 code to the code Detect answers with: "nb"
// and "nn" (the two written forms of Norwegian) are "no"; other codes are
// lower-cased, with any region ("en-GB") cut off.
func Canonical(code string) string {
	c := strings.ToLower(strings.TrimSpace(code))
	if i := strings.IndexAny(c, "-_"); i >= 0 {
		c = c[:i]
	}
	switch c {
	case "nb", "nn":
		return "no"
	}
	return c
}

// maxWords bounds the words of a text looked at.
const maxWords = 2000

// Detect returns the language of text and the share of its words the
// language's profile covers; "" when no profile covers enough of them.
func (d *Detector) Detect(text string) (string, float64) {
	score := map[string]float64{}
	total, hits := 0, 0
	start := -1
	word := func(w string) {
		total++
		langs := d.words[strings.ToLower(w)]
		if len(langs) == 0 {
			return
		}
		hits++
		for _, l := range langs {
			score[l] += 1 / float64(len(langs))
		}
	}
	for i, r := range text {
		if total >= maxWords {
			break
		}
		letter := unicode.IsLetter(r)
		if letter && start < 0 {
			start = i
		} else if !letter && start >= 0 {
			word(text[start:i])
			start = -1
		}
	}
	if start >= 0 && total < maxWords {
		word(text[start:])
	}
	best, bestScore := "", 0.0
	for l, s := range score {
		if s > bestScore || s == bestScore && l < best {
			best, bestScore = l, s
		}
	}
	if hits < d.MinWords || total == 0 {
		return "", 0
	}
	share := bestScore / float64(total)
	if share < d.MinShare {
		return "", share
	}
	return best, share
}
