import textstats


def test_word_count_splits_on_any_whitespace():
    assert textstats.word_count("one two\tthree\nfour  five") == 5
    assert textstats.word_count("") == 0
    assert textstats.word_count("   ") == 0


def test_top_words_lowercases_strips_punctuation_and_breaks_ties_alphabetically():
    text = 'The cat. the DOG! "dog" (cat) bird; ... the'
    assert textstats.top_words(text, 3) == [("the", 3), ("cat", 2), ("dog", 2)]
    assert textstats.top_words(text, 10)[-1] == ("bird", 1)
    assert textstats.top_words("", 3) == []


def test_reading_time_rounds_up():
    assert textstats.reading_time("") == 0
    assert textstats.reading_time("word") == 1
    assert textstats.reading_time(" ".join(["w"] * 400)) == 2
    assert textstats.reading_time(" ".join(["w"] * 401)) == 3
    assert textstats.reading_time(" ".join(["w"] * 100), wpm=50) == 2
