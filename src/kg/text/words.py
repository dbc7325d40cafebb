"""Word lists shared by kg's components: which head words type a phrase, which words are generic.

These are general knowledge of how ML abstracts name things ("… dataset", "… GPU",
"… detection"), not lists learnt from any annotated corpus.
"""

from __future__ import annotations

from kg.model import EntityType

# Head word (lower case, singular) → the type of a noun phrase it heads.
_HEADS: dict[EntityType, str] = {
    "DATASET": """dataset benchmark corpus treebank database testbed suite leaderboard
        collection lexicon wordnet knowledge-base""",
    "HARDWARE": """gpu tpu cpu npu ipu fpga asic chip processor accelerator microcontroller hardware device
        supercomputer workstation smartphone sensor qpu qubit chipset""",
    "METRIC": """accuracy recall f1 f-score f-measure auc auroc auprc score metric perplexity
        latency throughput bleu rouge meteor cider spice regret fid lpips psnr ssim
        mae mse rmse speedup error miou iou""",
    "TASK": """detection classification segmentation recognition generation translation retrieval prediction
        forecasting estimation tracking parsing summarization answering localization reconstruction
        synthesis captioning completion tagging labeling labelling extraction understanding planning
        navigation recommendation clustering compression denoising inpainting super-resolution editing
        restoration identification verification diagnosis imputation grounding manipulation
        disambiguation resolution alignment matching registration correction simplification
        paraphrasing processing modeling modelling discovery mining task problem control
        reasoning adaptation generalization""",
    "METHOD": """algorithm network model method approach framework technique architecture transformer encoder
        decoder autoencoder classifier regressor regression optimizer optimiser estimator sampler
        mechanism layer module embedding tree forest machine descent procedure heuristic scheme strategy
        policy filter field sampling distillation pruning quantization regularization
        normalization augmentation attention parser tagger pipeline solver paradigm
        learning training fine-tuning finetuning tuning prompting decoding""",
}


def _head_types(heads: dict[EntityType, str]) -> dict[str, EntityType]:
    """Head word → type; a word listed under two types keeps the first."""
    types: dict[str, EntityType] = {}
    for label, words in heads.items():
        for word in words.split():
            types.setdefault(word, label)
    return types


HEAD_TYPES: dict[str, EntityType] = _head_types(_HEADS)

# Heads so general that the phrase must carry a specific modifier to count.
GENERIC_HEADS = frozenset(
    """algorithm network model method approach framework technique architecture mechanism layer module
    system pipeline procedure scheme strategy paradigm formulation objective loss representation learning
    training tuning inference task problem process dataset data benchmark corpus collection device hardware
    score metric rate ratio error distance similarity correlation control reasoning adaptation generalization
    modeling modelling search-task understanding planning discovery mining analysis""".split()
)

# Generic heads that only wrap a name: "the xLSTM architecture" is xLSTM.
WRAPPER_HEADS = frozenset(
    """algorithm method approach framework technique architecture model variant version family
    mechanism module pipeline scheme strategy procedure paradigm system tool solution implementation""".split()
)

# Heads that never make an entity of kg's types, e.g. "Random Matrix Theory (RMT)".
NON_ENTITY_HEADS = frozenset(
    """theory theorem lemma law principle hypothesis condition property result paper work study
    article survey author conference workshop university institute company organization laboratory lab
    year day time people person human user""".split()
)

# Modifiers that say nothing about which thing is meant; trimmed from the left of phrases.
GENERIC_MODIFIERS = frozenset(
    """a an the this that these those its their our his her my your which what whose each every all both any
    some few several many most more less much other another such same similar various different multiple
    novel new proposed existing efficient effective standard popular simple robust strong state-of-the-art
    recent previous prior original current common typical traditional conventional powerful general unified
    lightweight flexible scalable first second third final best better good great key main major specific
    particular practical principled generic classical modern advanced sophisticated improved high low
    well-known widely-used widely used real-world diverse extensive comprehensive challenging important
    underlying corresponding respective baseline downstream above following alternative overall whole entire
    additional further earlier naive fundamental promising significant considerable competitive
    public publicly available large-scale small-scale high-quality training test testing evaluation
    validation benchmark benchmarks synthetic real large small big huge tiny long short fast slow
    accurate exact approximate optimal suboptimal superior inferior competing leading
    one two three four five six seven eight nine ten dozen hundreds thousands millions numerous
    own certain given known unknown related relevant appropriate suitable possible potential
    actual true resulting initial preliminary empirical theoretical experimental
    substantial remarkable impressive wide broad narrow deep shallow
    complex complicated difficult hard easy crucial critical essential
    presented introduced developed designed adopted employed applied
    prevailing dominant mainstream emerging emergent rapid precise future minor basic deeper
    faster higher lower larger smaller stronger weaker richer cheaper easier harder broader wider
    adaptive iterative detailed imperfect hopeless simple-to-implement efficiently
    costly expensive cheap realistic ideal idealized novel-ish extra compact unlabeled labeled""".split()
)

# Pronouns and words that are never entities on their own.
STOP_WORDS = frozenset(
    """we us our ours i me my you your he she it its they them their this that these those which who whom
    what there here one ones is are was were be been being has have had do does did not no yes""".split()
)

# Verbs (lemmas) that, with "we"/"this paper" as subject, introduce what a paper proposes.
PROPOSE_VERBS = frozenset(
    """propose introduce present develop design devise build construct create curate release
    formulate contribute offer unveil call name term dub""".split()
)
# Words right before a curated concept that make it the paper's own new one: "a new Gaussian process".
NOVELTY_WORDS = frozenset({"new", "novel"})
# Words right before a name that mark it as the paper's own: "called X", "dubbed X".
NAMING_WORDS = frozenset("called named dubbed termed coined namely".split())
# Subjects of PROPOSE_VERBS that make the sentence about the paper's own contribution.
SELF_SUBJECTS = frozenset("we paper work study article i".split())

# -- lexicon propagation (`kg.concepts.propagate`): which labels are worth finding again ---------------

# Words a name never starts or ends with (function words, and the verbs of an abstract's claims).
EDGE_WORDS = frozenset(
    """a an the this that these those its their our his her my your which what whose each every all both any
    some few several many most more much other another such same and or nor but yet so of for in on at to from
    by with without via into onto over under between among as than then is are was were be been being we us it
    they them also not no only very well thus hence however while propose proposes proposed present presents
    introduce introduces show shows demonstrate demonstrates use uses using achieve achieves provide provides
    develop develops can could may might will would should must when where how why if whether""".split()
)
# Words that say nothing on their own: a label made only of these (and edge words) names no
# concept worth finding again ("state of the art", "proposed method", "real-world dataset").
# The generic heads, plus descriptors and nouns too vague to be a name by themselves.
GENERIC_WORDS = GENERIC_HEADS | frozenset(
    """accurate art available based baseline best better case challenging common conventional current
    different difficult downstream easy effective efficient evaluation existing experiment fast feature first
    function general good hard high important information input key knowledge large level low multiple
    natural new novel one original output paper parameter performance popular powerful previous prior
    proposed public quality question real recent result robust sample scale second set setting simple single
    small solution standard state strong structure study synthetic three tool traditional two typical unified
    value variable various way work world""".split()
)
# Modifiers that say nothing about which thing is meant, when a label starts with one: a
# leftover of a description ("specific task", "faster inference"). Narrower than
# GENERIC_MODIFIERS (which extraction trims): it leaves out modifiers that start many real
# names (large language model, optimal transport, multiple instance learning, long short-term
# memory, test-time adaptation).
FIRST_WORD_STOP = frozenset(
    """novel new proposed existing efficient effective popular simple recent previous prior original current
    common typical traditional conventional powerful unified lightweight flexible scalable third final best
    better good great key main major specific particular practical principled generic modern advanced
    sophisticated improved well-known widely-used real-world diverse extensive comprehensive challenging
    important underlying corresponding respective downstream above following alternative overall whole entire
    additional further earlier fundamental promising significant considerable competitive public publicly
    available high-quality synthetic huge accurate suboptimal superior inferior competing leading dozen
    hundreds thousands millions numerous own certain given known unknown related relevant appropriate suitable
    possible actual resulting preliminary theoretical substantial remarkable impressive broad narrow
    complicated difficult crucial essential presented introduced developed designed used adopted employed
    applied prevailing dominant mainstream emerging emergent rapid precise future minor basic deeper faster
    higher lower larger smaller stronger weaker richer cheaper easier harder broader wider detailed costly
    expensive cheap realistic idealized compact varying various different several many separate specialized
    dedicated train trained training evaluation validation benchmark""".split()
)
# Words a following hyphen may join to a name without making it another name ("BERT-based").
NAME_SUFFIXES = frozenset("based like style driven guided aware powered enhanced augmented inspired specific oriented centric".split())
# Adverbs that start a description, not a name ("computationally efficient model").
ADVERB_ENDINGS = ("ally", "ively", "ously", "ently", "antly", "ably", "ibly", "ghly")

# -- acronym definitions (`kg.extract.components.abbreviations`) --------------------------------------

# Words a long form never starts or ends with ("the Transformer (TF)" defines "Transformer").
LONG_FORM_EDGE_WORDS = frozenset("the a an of and or for in on to with by we our is are which that as".split())

# -- coined names (`kg.extract.components.coinages`) --------------------------------------------------

# Capitalised short forms that are not entities of kg's types.
NOT_COINAGES = frozenset(
    """AI ML US USA UK EU UN II III IV PhD OK API APIs URL URLs PDF HTML JSON XML CSV SQL CEO ID IDs GitHub
    YouTube LaTeX COVID COVID-19 SARS-CoV-2 DNA RNA HIV ICML NeurIPS NIPS ICLR CVPR ICCV ECCV ACL EMNLP NAACL
    AAAI IJCAI KDD WWW SIGIR COLING AISTATS COLT UAI CoRL arXiv PMLR IEEE ACM NSF NIH DARPA USD IoT IT ICU
    ER OR AND NOT IF FAQ TV PC PCs UI UX GUI CLI OS iOS CN EN FR DE ZH JA KO FP4 FP8 FP16 FP32 FP64 BF16 INT4 INT8
    TF32 RGB RGB-D HD 4K LLM-based SOTA SoTA""".split()
)

# -- modifier families (`kg.concepts.hierarchy`) ----------------------------------------------

# First words that describe rather than name a topic, besides the generic modifiers: no family of
# concepts is named by them ("dynamic scenes", "dynamic attention"; "mean squared error", "mean
# reciprocal rank"). The ones a 1,200-paper arXiv 2025 build put among its 40 largest families.
NOT_FAMILY_MODIFIERS = frozenset(
    """dynamic mean base direct local global structured hierarchical fine-grained pretrained pre-trained
    joint adaptive optimal single dual hybrid explicit implicit""".split()
)

# -- derived titles (`kg.ingest.titles`) ------------------------------------------------------

# Prepositions and clause starters after which a name is no longer the thing proposed ("a method for LLMs").
TITLE_CLAUSE_WORDS = frozenset(
    "for to of that which with in on by from as using via where while when whose and or but is are".split()
)
# Words that put a parenthesised acronym outside the proposed thing ("a method for question answering (QA)").
TITLE_PREPOSITIONS = frozenset("for to of with in on by from using via that which where while when whose".split())

# Words a title opens with that are no name ("Towards …: ", "Rethinking …: ").
TITLE_OPENERS = frozenset(
    """towards toward on beyond rethinking revisiting understanding learning when why how what is are do does can
    should a an the from through into about against improving scaling making unleashing unlocking exploring""".split()
)

# -- span hygiene (`kg.extract.components.hygiene`) ----------------------------------------------------

# Words an entity span never starts with ("this passive domain adaptation", "our method").
SPAN_LEADING_WORDS = frozenset("a an the this these those that such our their its".split())

# Nouns too vague to stand alone as a broader concept ("target domain" → "domain" would tie every
# paper with a domain together); the generic words above are excluded as well. Used only by the
# corpus-wide hierarchy (kg.concepts.hierarchy), not by extraction.
VAGUE_HEADS = frozenset(
    """domain environment distribution space application description scenario scenarios version
    server behavior behaviour setting instance example component element factor aspect level unit type
    kind form part piece issue challenge case context regime condition situation property quantity
    amount number size length range region area field term signal source target input output step
    stage phase round iteration point set group class category pattern trend effect impact change
    operation action state status object entity item sample instance design view perspective goal
    purpose need use usage capability ability capacity cost budget requirement constraint""".split()
)

# Whole research fields: ANNOTATION.md never marks them ("machine learning, computer vision, NLP,
# robotics, artificial intelligence, information retrieval"); they stay concepts of the curated
# hierarchy, where they are broader concepts, but are not mentions of a paper.
RESEARCH_FIELDS = frozenset(
    field.strip()
    for field in """machine learning|artificial intelligence|AI|natural language processing|NLP|computer vision|robotics|
    information retrieval|data mining|signal processing|image processing|speech processing|pattern recognition|
    computational linguistics|statistics|neuroscience|computational neuroscience|cognitive science|bioinformatics|
    computer graphics|operations research|control theory|information theory|learning theory|statistical learning theory|
    deep learning research|machine learning research""".split("|")
)
